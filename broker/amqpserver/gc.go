package amqpserver

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Garbage collector budget of a serving process; see TuneGC.
const (
	// GCHeapBudget is the heap size up to which TuneGC lets garbage grow
	// before collecting.
	GCHeapBudget = 1 << 30
	// GCPercentMax is the GOGC value TuneGC uses while the live heap is
	// small: collect when the heap is five times what is live.
	GCPercentMax = 400
)

// TuneGC trades memory for CPU in a process whose work is serving, until
// ctx ends. Each delivery allocates a few short-lived buffers, and with Go's
// default (GOGC=100) the collector costs a quarter of the listener's CPU.
// TuneGC checks the live heap every second and sets GOGC so that the heap
// may grow to GCHeapBudget before a collection, but never above
// GCPercentMax and never below the default 100: a small broker collects
// five times less often, and one whose live heap passes 512 MiB behaves as
// Go's default does. It does nothing when the GOGC environment variable is
// set. BENCHMARKS.md has the measurements.
func TuneGC(ctx context.Context) {
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

// gcPercent returns the GOGC value that lets a heap with live bytes grow to
// GCHeapBudget, clamped to [100, GCPercentMax].
func gcPercent(live uint64) int {
	if live == 0 {
		return GCPercentMax
	}
	p := (GCHeapBudget/float64(live) - 1) * 100
	return int(min(max(p, 100), GCPercentMax))
}
