//go:build unix

package proccpu

import (
	"syscall"
	"time"
)

// Used returns the user and system CPU time the process has used so far,
// and false when the system does not tell.
func Used() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
