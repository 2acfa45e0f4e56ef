package loadtest

import (
	"fmt"
	"runtime/metrics"
	"time"

	"github.com/peeklock/peeklock/internal/proccpu"
)

// processCPU returns the user and system CPU time this process used so
// far, or 0 if the system does not tell.
func processCPU() time.Duration {
	d, _ := proccpu.Used()
	return d
}

// counters are what a listener's process counted so far besides its CPU
// time, which tell what that time went to: page faults (in this VM each
// fresh page costs more CPU than a kilobyte of decoding), context switches
// (a goroutine handing work to another that sleeps wakes a thread), read
// and write system calls (one per frame batch read or written), and the
// times a goroutine that waited was made to run (goroutineRuns: the
// hand-offs from one goroutine to another).
type counters struct {
	faults, switches, reads, writes, runs int64
}

// sub returns the counts of c since earlier.
func (c counters) sub(earlier counters) counters {
	return counters{c.faults - earlier.faults, c.switches - earlier.switches, c.reads - earlier.reads, c.writes - earlier.writes, c.runs - earlier.runs}
}

func (c counters) add(o counters) counters {
	return counters{c.faults + o.faults, c.switches + o.switches, c.reads + o.reads, c.writes + o.writes, c.runs + o.runs}
}

// format is the answer of a child's "counters" command.
func (c counters) format() string {
	return fmt.Sprintf("counters %d %d %d %d %d", c.faults, c.switches, c.reads, c.writes, c.runs)
}

// parseCounters reads an answer of format.
func parseCounters(answer string) (counters, error) {
	var c counters
	_, err := fmt.Sscanf(answer, "counters %d %d %d %d %d", &c.faults, &c.switches, &c.reads, &c.writes, &c.runs)
	return c, err
}

// goroutineRuns estimates how many times this process's goroutines went
// from runnable to running: the runtime samples one in 8 of those
// transitions per goroutine into its scheduling-latency histogram
// (gTrackingPeriod), so the count is the histogram's times 8.
func goroutineRuns() int64 {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return int64(n) * 8
}
