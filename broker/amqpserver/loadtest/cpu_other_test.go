//go:build !unix

package loadtest

import "time"

// processCPU returns 0: this system's CPU time is not measured.
func processCPU() time.Duration { return 0 }

// pageFaults returns 0: this system's page faults are not counted.
func pageFaults() int64 { return 0 }
