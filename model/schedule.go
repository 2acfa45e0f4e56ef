package model

import "time"

// schedule is the bookkeeping of the refreshes and of the animation
// frame: at most one refresh in flight, with another wanted after it;
// events debounced into one kick; one frame armed at a time. Every timer
// carries an id, so a stale one is dropped. It does no I/O: the root model
// starts what it says.
type schedule struct {
	tickID     int  // the refresh tick's id (a stale tick is dropped)
	refreshing bool // a refresh is in flight
	gen        int  // the generation of the refresh in flight or last
	want       bool // events or actions asked for a refresh while busy
	last       time.Time
	kickID     int
	kickArmed  bool
	frameID    int
	frameArmed bool
}

// begin starts a refresh at now and returns its generation; ok is false
// while one is in flight, and another then follows it.
func (s *schedule) begin(now time.Time) (gen int, ok bool) {
	if s.refreshing {
		s.want = true
		return 0, false
	}
	s.refreshing, s.want, s.last = true, false, now
	s.gen++
	return s.gen, true
}

// finish ends refresh gen; false for a stale one, which is dropped.
func (s *schedule) finish(gen int) bool {
	if gen != s.gen {
		return false
	}
	s.refreshing = false
	return true
}

// event asks for a refresh at now because events arrived, at most one per
// eventDebounce: now says to start it now, kick is the id of a kick to arm
// for later (0 when one is armed already).
func (s *schedule) event(now time.Time) (startNow bool, kick int) {
	if !s.refreshing && now.Sub(s.last) >= eventDebounce {
		return true, 0
	}
	if s.kickArmed {
		return false, 0
	}
	s.kickArmed = true
	s.kickID++
	return false, s.kickID
}

// kicked takes kick id; false for a stale one.
func (s *schedule) kicked(id int) bool {
	if id != s.kickID {
		return false
	}
	s.kickArmed = false
	return true
}

// armFrame arms the animation frame and returns its id.
func (s *schedule) armFrame() int {
	s.frameArmed = true
	s.frameID++
	return s.frameID
}

// frameDue takes frame id; false for a stale one.
func (s *schedule) frameDue(id int) bool {
	if id != s.frameID {
		return false
	}
	s.frameArmed = false
	return true
}
