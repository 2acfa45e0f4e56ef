package engine

import (
	"syscall"
	"time"
)

// preciseSleep sleeps d in one nanosleep system call, which the kernel ends
// within a fraction of a millisecond of d (see timerSlack); a signal ends it
// early, and the sweeper's loop then sleeps what is left.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
