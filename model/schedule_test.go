package model

import (
	"testing"
	"time"
)

// The schedule never runs two refreshes at once (a request while one is
// in flight is kept for after it), drops a stale result, debounces events
// into one kick, and arms one frame at a time.
func TestSchedule(t *testing.T) {
	var s schedule
	t0 := time.Unix(1000, 0)
	g1, ok := s.begin(t0)
	if !ok || !s.refreshing {
		t.Fatal("the first refresh did not start")
	}
	if _, ok := s.begin(t0); ok || !s.want {
		t.Fatalf("a second refresh started while one was in flight (want %v)", s.want)
	}
	if s.finish(g1 - 1) {
		t.Fatal("a stale result was taken")
	}
	if !s.finish(g1) || s.refreshing {
		t.Fatal("the result of the refresh in flight was not taken")
	}
	if start, kick := s.event(t0.Add(eventDebounce / 2)); start || kick == 0 {
		t.Fatalf("an event right after a refresh: start %v, kick %d; want a kick", start, kick)
	}
	if start, kick := s.event(t0.Add(eventDebounce / 2)); start || kick != 0 {
		t.Fatalf("a second event: start %v, kick %d; want nothing (one kick armed)", start, kick)
	}
	if s.kicked(s.kickID-1) || !s.kicked(s.kickID) || s.kickArmed {
		t.Fatal("the kick's id is not checked, or it stays armed")
	}
	if start, _ := s.event(t0.Add(eventDebounce)); !start {
		t.Fatal("an event a debounce after the last refresh did not start one")
	}
	id := s.armFrame()
	if !s.frameArmed || s.frameDue(id-1) || !s.frameDue(id) || s.frameArmed {
		t.Fatal("the frame's id is not checked, or it stays armed")
	}
}
