//go:build !unix

package proctune

import "time"

// processCPU reports that the process's CPU time is not read here: Start
// leaves GOMAXPROCS alone.
func processCPU() (time.Duration, bool) { return 0, false }
