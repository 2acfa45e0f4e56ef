package amqpserver

import "github.com/peeklock/peeklock/broker/amqpserver/internal/wire"

// dispositionRun gathers the outcomes a session sends for consecutive
// delivery ids into one disposition frame with a range (first..last), as
// long as they agree: the same role, the same settled flag, and an outcome
// without details of its own (accepted or released). A pipelining client
// then reads one frame for a whole batch stored or settled with one engine
// call instead of one per delivery. Outcomes that differ (a rejection with
// its error) go in frames of their own, in order.
type dispositionRun struct {
	s       *session
	role    wire.Role
	open    bool
	first   uint32
	last    uint32
	settled bool
	state   wire.DeliveryState
}

func (s *session) newDispositionRun(role wire.Role) *dispositionRun {
	return &dispositionRun{s: s, role: role}
}

// addLocked adds the outcome of delivery id; the caller holds s.mu and
// calls flushLocked when done.
func (r *dispositionRun) addLocked(id uint32, settled bool, state wire.DeliveryState) {
	// id != 0: a range never wraps around (some clients walk first..last
	// with <=).
	if r.open && id == r.last+1 && id != 0 && settled == r.settled && rangeable(state) && sameKind(state, r.state) {
		r.last = id
		return
	}
	r.flushLocked()
	r.open, r.first, r.last, r.settled, r.state = true, id, id, settled, state
}

// flushLocked sends the gathered range, if any.
func (r *dispositionRun) flushLocked() {
	if !r.open {
		return
	}
	d := &wire.Disposition{Role: r.role, First: r.first, Settled: r.settled, State: r.state}
	if r.last != r.first {
		d.Last = wire.Some(r.last)
	}
	r.s.sendLocked(d)
	r.open = false
}

// rangeable reports whether one frame may carry state for several
// deliveries: the outcomes that have no fields of their own.
func rangeable(state wire.DeliveryState) bool {
	switch state.(type) {
	case wire.Accepted, wire.Released:
		return true
	}
	return false
}

func sameKind(a, b wire.DeliveryState) bool {
	switch a.(type) {
	case wire.Accepted:
		_, ok := b.(wire.Accepted)
		return ok
	case wire.Released:
		_, ok := b.(wire.Released)
		return ok
	}
	return false
}
