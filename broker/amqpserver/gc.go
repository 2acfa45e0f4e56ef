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
	// GCHeadroom is how far TuneGC lets the heap grow above what is live
	// before collecting, while GCPercentMax allows it.
	GCHeadroom = 128 << 20
	// GCPercentMax is the highest GOGC value TuneGC uses: collect when the
	// heap is five times what is live.
	GCPercentMax = 400
)

// TuneGC trades memory for CPU in a process whose work is serving, until
// ctx ends. Each delivery allocates a few short-lived buffers, and with Go's
// default (GOGC=100) the collector costs a quarter of the listener's CPU.
// TuneGC checks the live heap every second and sets GOGC so that garbage
// may grow to GCHeadroom above the live heap before a collection, but never
// above GCPercentMax and never below the default 100: a small broker
// collects five times less often, and one with a large live heap (a
// thousand connections hold about 60 MiB) keeps its resident memory near
// the live heap plus GCHeadroom instead of five times the live heap. It does
// nothing when the GOGC environment variable is set. BENCHMARKS.md has the
// measurements.
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

// gcPercent returns the GOGC value that lets a heap with live bytes grow by
// GCHeadroom, clamped to [100, GCPercentMax].
func gcPercent(live uint64) int {
	if live == 0 {
		return GCPercentMax
	}
	p := GCHeadroom / float64(live) * 100
	return int(min(max(p, 100), GCPercentMax))
}
