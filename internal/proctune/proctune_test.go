package proctune

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTunerPolicy(t *testing.T) {
	tu := &tuner{policy: policy{raiseAt: 0.9, lowerBelow: 0.8, lowerAfter: 3}}
	steps := []struct {
		used float64
		one  bool
	}{
		{0.5, false}, {0.5, false}, // two low Intervals: not yet
		{0.85, false}, // one at or above lowerBelow starts the count again
		{0.1, false}, {0.79, false},
		{0.2, true},   // the third low Interval in a row: one P
		{0.89, true},  // below raiseAt: one P still
		{0.0, true},   //
		{0.9, false},  // one P nearly full: the default at once
		{0.0, false},  // and the count of low Intervals starts from nothing
		{0.0, false},  //
		{0.0, true},   //
		{1.05, false}, // a P's syscalls can take it past one core
	}
	for i, s := range steps {
		if got := tu.next(s.used); got != s.one {
			t.Fatalf("step %d: next(%.2f) = %v, want %v", i, s.used, got, s.one)
		}
	}
}

// TestStartFollowsUse runs Start's loop for real: an idle process goes to
// one P, and one whose goroutines keep a P busy goes back to the default.
// The test's policy raises at a tenth of a core, which two spinning
// goroutines reach on a busy machine too.
func TestStartFollowsUse(t *testing.T) {
	t.Setenv("GOMAXPROCS", "") // empty counts as unset
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(orig) })
	runtime.SetDefaultGOMAXPROCS() // what Start goes back to
	def := runtime.GOMAXPROCS(0)
	if def < 2 {
		t.Skip("one core: Start leaves GOMAXPROCS alone")
	}
	ctx, cancel := context.WithCancel(context.Background())
	start(ctx, policy{raiseAt: 0.1, lowerBelow: 0.05, lowerAfter: 3}, 20*time.Millisecond)
	waitFor(t, "one P while idle", func() bool { return runtime.GOMAXPROCS(0) == 1 })

	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for !stop.Load() { // spin
			}
		})
	}
	waitFor(t, "the default Ps while busy", func() bool { return runtime.GOMAXPROCS(0) == def })
	stop.Store(true)
	wg.Wait()

	waitFor(t, "one P once idle again", func() bool { return runtime.GOMAXPROCS(0) == 1 })
	cancel()
	waitFor(t, "the default Ps once ctx ends", func() bool { return runtime.GOMAXPROCS(0) == def })
}

func TestStartLeavesASetGOMAXPROCS(t *testing.T) {
	t.Setenv("GOMAXPROCS", "2")
	before := runtime.GOMAXPROCS(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// start goes to one P before its loop begins, so a wrong start shows
	// as soon as it returns.
	start(ctx, policy{raiseAt: 2, lowerBelow: 2, lowerAfter: 1}, time.Millisecond)
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS is %d, want %d: Start changed it though the environment sets it", got, before)
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute (GOMAXPROCS %d)", what, runtime.GOMAXPROCS(0))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
