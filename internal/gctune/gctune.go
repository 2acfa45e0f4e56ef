// Package gctune sets the garbage collector's budget of a serving process
// (peeklock serve, and the load test's listener process that stands in for
// it): a process setting, kept out of the listener's package, that the
// command's wiring starts.
package gctune

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Garbage collector budget of a serving process; see Start.
const (
	// Headroom is how far Start lets the heap grow above what is live
	// before collecting, while PercentMax allows it.
	Headroom = 128 << 20
	// PercentMax is the highest GOGC value Start uses: collect when the
	// heap is five times what is live.
	PercentMax = 400
)

// Start trades memory for CPU in a process whose work is serving, until
// ctx ends. Each delivery allocates a few short-lived buffers, and with Go's
// default (GOGC=100) the collector costs a quarter of the listener's CPU.
// Start checks the live heap every second and sets GOGC so that garbage
// may grow to Headroom above the live heap before a collection, but never
// above PercentMax and never below the default 100: a small broker
// collects five times less often, and one with a large live heap (a
// thousand connections hold about 60 MiB) keeps its resident memory near
// the live heap plus Headroom instead of five times the live heap. It does
// nothing when the GOGC environment variable is set. BENCHMARKS.md has the
// measurements.
func Start(ctx context.Context) {
	if os.Getenv("GOGC") != "" {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	set := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetGCPercent(gcPercent(sample[0].Value.Uint64()))
		}
	}
	set()
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				set()
			}
		}
	}()
}

// gcPercent returns the GOGC value that lets a heap with live bytes grow by
// Headroom, clamped to [100, PercentMax].
func gcPercent(live uint64) int {
	if live == 0 {
		return PercentMax
	}
	p := Headroom / float64(live) * 100
	return int(min(max(p, 100), PercentMax))
}
