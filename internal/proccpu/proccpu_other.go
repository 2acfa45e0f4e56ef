//go:build !unix

package proccpu

import "time"

// Used reports that the process's CPU time is not read on this system.
func Used() (time.Duration, bool) { return 0, false }
