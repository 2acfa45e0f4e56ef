//go:build !unix

package loadtest

import "time"

// processCPU returns 0: this system's CPU time is not measured.
func processCPU() time.Duration { return 0 }

// countersNow returns nothing counted: this system does not tell.
func countersNow() counters { return counters{} }
