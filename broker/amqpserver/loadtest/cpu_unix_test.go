//go:build unix

package loadtest

import (
	"syscall"
	"time"
)

// processCPU returns the user and system CPU time this process used so
// far, or 0 if the system does not tell.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pageFaults returns the page faults this process took so far (minor and
// major), or 0 if the system does not tell.
func pageFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt + ru.Majflt
}
