// Package proctune sets how many Ps (GOMAXPROCS) a serving process runs its
// goroutines on: one while its work fits in part of one core, the runtime's
// default once it needs more. It is a process setting, kept out of the
// listener's package, that the command's wiring starts (peeklock serve, and
// the load test's listener process that stands in for it), as gctune is.
//
// Why: a listener whose work fits in one core still spreads it over every P.
// Each hand-off between its goroutines then wakes an idle thread (a futex
// call and an OS context switch), and idle threads spin looking for work.
// On one P the same hand-offs are a goroutine switch in one thread.
// BENCHMARKS.md (session 33) has the measurements: on one P, one client's
// sends and receives in memory cost the listener 11–18% less CPU per
// message, and go 6–8% faster.
package proctune

import (
	"context"
	"os"
	"runtime"
	"time"

	"github.com/peeklock/peeklock/internal/proccpu"
)

// The policy; see tuner.next.
const (
	// Interval is how often Start reads the process's CPU time.
	Interval = 100 * time.Millisecond
	// RaiseAt is the share of a core that, used in one Interval on one P,
	// shows that one P is (nearly) full: Start goes back to the runtime's
	// default at once.
	RaiseAt = 0.9
	// LowerBelow and LowerAfter: on the default Ps, a process that used
	// less than LowerBelow of a core in each of LowerAfter Intervals in a
	// row goes to one P. The gap between LowerBelow and RaiseAt is room for
	// what one P saves, so that a load does not go back and forth.
	LowerBelow = 0.8
	LowerAfter = 10
)

// policy is the thresholds of a tuner (the constants above, or a test's).
type policy struct {
	raiseAt, lowerBelow float64
	lowerAfter          int
}

var defaultPolicy = policy{raiseAt: RaiseAt, lowerBelow: LowerBelow, lowerAfter: LowerAfter}

// tuner is Start's state from one Interval to the next.
type tuner struct {
	policy
	one bool // on one P
	low int  // Intervals in a row on the default Ps below lowerBelow
}

// next takes the share of a core the process used in the last Interval
// and returns whether it is to run on one P from now on.
func (t *tuner) next(used float64) bool {
	if t.one {
		t.one = used < t.raiseAt
		return t.one
	}
	if used < t.lowerBelow {
		t.low++
	} else {
		t.low = 0
	}
	if t.low >= t.lowerAfter {
		t.one, t.low = true, 0
	}
	return t.one
}

// Start runs the process on one P from now on, and on the runtime's default
// number of Ps (runtime.SetDefaultGOMAXPROCS, which follows the CPU limit)
// as soon as one P is nearly full (RaiseAt), until it uses less than
// LowerBelow of a core again (for LowerAfter Intervals); when ctx ends it
// leaves the default. Start it once the process has sized itself: a
// library that sizes its shards by GOMAXPROCS when it opens (Pebble's
// caches) would see one P. It does nothing when the GOMAXPROCS
// environment variable is set, on a machine of one core, or where the
// process's CPU time cannot be read.
func Start(ctx context.Context) {
	start(ctx, defaultPolicy, Interval)
}

// start is Start with the policy and interval given.
func start(ctx context.Context, p policy, every time.Duration) {
	if os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	if _, ok := proccpu.Used(); !ok {
		return
	}
	runtime.GOMAXPROCS(1) // a process starts idle
	go run(ctx, &tuner{policy: p, one: true}, every)
}

// run is Start's loop.
func run(ctx context.Context, t *tuner, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	defer runtime.SetDefaultGOMAXPROCS()
	cpu, _ := proccpu.Used()
	at := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			c, _ := proccpu.Used()
			wall := now.Sub(at)
			if wall <= 0 {
				continue
			}
			used := float64(c-cpu) / float64(wall)
			cpu, at = c, now
			was := t.one
			switch one := t.next(used); {
			case one == was:
			case one && runtime.GOMAXPROCS(0) < 2: // the default became one P meanwhile
				t.one = false
			case one:
				runtime.GOMAXPROCS(1)
			default:
				runtime.SetDefaultGOMAXPROCS()
			}
		}
	}
}
