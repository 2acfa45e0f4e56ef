package amqpserver

import (
	"context"
	"sync"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// sessionWindow is the incoming and outgoing window, in transfer frames,
// that the listener announces for every session.
const sessionWindow = 5000

// maxDispositionRange bounds the deliveries one disposition frame may
// settle by range; wider ranges are walked over the unsettled deliveries
// instead of over the numbers.
const maxDispositionRange = 1 << 12

// session is one AMQP session. mu guards every field and the state of its
// links; the reader goroutine and the link goroutines all take it, for
// short steps only: frames are queued under it in order but never written
// or waited on (see writer), so the reader never waits on a slow peer.
// cond (on mu) wakes link goroutines waiting for the peer's incoming
// window.
type session struct {
	c    *conn
	ch   uint16
	mu   sync.Mutex
	cond *sync.Cond

	links     map[uint32]*link // by the peer's handle (ours is the same)
	handleMax uint32
	done      bool // ended, or the connection is gone: send nothing more
	ending    bool // we sent an end with an error and wait for the peer's end

	// Incoming transfers (§2.5.6).
	nextIncomingID uint32
	incomingWindow uint32
	// Outgoing transfers.
	nextOutgoingID       uint32
	remoteIncomingWindow uint32
	nextDeliveryID       uint32
	outUnsettled         map[uint32]outDelivery // our deliveries awaiting the peer's outcome (by value: no allocation each)
}

func newSession(c *conn, ch uint16, b *wire.Begin) *session {
	s := &session{
		c:                    c,
		ch:                   ch,
		links:                make(map[uint32]*link),
		handleMax:            min(uint32(c.opts.MaxLinksPerSession-1), b.HandleMaxValue()),
		nextIncomingID:       b.NextOutgoingID,
		incomingWindow:       sessionWindow,
		remoteIncomingWindow: b.IncomingWindow,
		outUnsettled:         make(map[uint32]outDelivery),
	}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// sendLocked queues a frame on the session's channel unless the session is
// done. The caller holds s.mu; queuing never waits on the writer.
func (s *session) sendLocked(p wire.Performative) bool {
	if s.done {
		return false
	}
	return s.c.sendFrame(s.ch, p)
}

// addLinkLocked puts l in the session's table; the caller holds s.mu.
func (s *session) addLinkLocked(l *link) {
	s.links[l.handle] = l
	s.c.links.Add(1)
}

// dropLinkLocked takes the link of handle h out of the session's table;
// the caller holds s.mu.
func (s *session) dropLinkLocked(h uint32) {
	if _, ok := s.links[h]; ok {
		delete(s.links, h)
		s.c.links.Add(-1)
	}
}

// handle handles one frame of the session (reader goroutine). Session and
// connection errors are returned; link errors detach the link.
func (s *session) handle(p wire.Performative) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ending {
		if e, ok := p.(*wire.End); ok {
			return s.onEnd(e)
		}
		return nil // ignored until the peer's end
	}
	switch p := p.(type) {
	case *wire.Attach:
		return s.onAttach(p)
	case *wire.Flow:
		return s.onFlow(p)
	case *wire.Transfer:
		return s.onTransfer(p)
	case *wire.Disposition:
		return s.onDisposition(p)
	case *wire.Detach:
		return s.onDetach(p)
	case *wire.End:
		return s.onEnd(p)
	}
	return connError(wire.CondNotAllowed, "%s on channel %d", frameName(p), s.ch)
}

// flowLocked returns a flow frame with the session's state; the caller
// holds s.mu and adds link fields when needed.
func (s *session) flowLocked() *wire.Flow {
	return &wire.Flow{
		NextIncomingID: wire.Some(s.nextIncomingID),
		IncomingWindow: s.incomingWindow,
		NextOutgoingID: s.nextOutgoingID,
		OutgoingWindow: sessionWindow,
	}
}

// onFlow updates the peer's window and, for a link flow, the link's
// credit.
func (s *session) onFlow(f *wire.Flow) error {
	// §2.5.6: remote-incoming-window = next-incoming-id(flow) +
	// incoming-window(flow) - next-outgoing-id(endpoint), with our
	// initial outgoing id (0) when next-incoming-id is absent.
	// A peer claiming more than it was sent is wrong: no window then.
	s.remoteIncomingWindow = f.NextIncomingID.Value + f.IncomingWindow - s.nextOutgoingID
	if s.remoteIncomingWindow > f.IncomingWindow {
		s.remoteIncomingWindow = 0
	}
	s.cond.Broadcast()
	s.flushAllRepliesLocked()
	h, ok := f.Handle.Get()
	if !ok {
		if f.Echo {
			s.sendLocked(s.flowLocked())
		}
		return nil
	}
	l := s.links[h]
	if l == nil {
		return sessionError(wire.CondUnattachedHandle, "flow for handle %d, which is not attached", h)
	}
	if l.state != linkAttached {
		return nil
	}
	l.onFlowLocked(f)
	return nil
}

// onTransfer accounts for one transfer frame in the session window and
// hands it to its link.
func (s *session) onTransfer(t *wire.Transfer) error {
	if s.incomingWindow == 0 {
		return sessionError(wire.CondWindowViolation, "transfer beyond the incoming window of %d frames", sessionWindow)
	}
	s.incomingWindow--
	s.nextIncomingID++
	defer s.refreshWindowLocked()
	l := s.links[t.Handle]
	if l == nil {
		return sessionError(wire.CondUnattachedHandle, "transfer for handle %d, which is not attached", t.Handle)
	}
	if l.state != linkAttached {
		return nil // detaching: dropped
	}
	if !l.incoming() {
		l.failLocked(&wire.Error{Condition: wire.CondNotAllowed, Description: "transfer on a link where the listener is the sender"})
		return nil
	}
	l.onTransferLocked(t)
	return nil
}

// refreshWindowLocked re-opens the incoming window when half is used.
func (s *session) refreshWindowLocked() {
	if s.incomingWindow <= sessionWindow/2 && !s.done {
		s.incomingWindow = sessionWindow
		s.sendLocked(s.flowLocked())
	}
}

// onDisposition handles the peer's dispositions: outcomes of our
// deliveries (peer role receiver). As a sender the peer has nothing to
// tell: the listener settles every outcome of its deliveries at once
// (outcomeLocked).
func (s *session) onDisposition(d *wire.Disposition) error {
	last := d.First
	if v, ok := d.Last.Get(); ok {
		if v < d.First {
			return sessionError(wire.CondInvalidField, "disposition with last %d before first %d", v, d.First)
		}
		last = v
	}
	if d.Role == wire.RoleReceiver {
		s.forEachOut(d.First, last, func(id uint32, od outDelivery) {
			s.settleOutLocked(id, od, d)
		})
	}
	return nil
}

// forEachOut calls fn for every unsettled outgoing delivery in
// [first, last] (serial-number arithmetic).
func (s *session) forEachOut(first, last uint32, fn func(uint32, outDelivery)) {
	if last-first < maxDispositionRange {
		for id := first; ; id++ {
			if od, ok := s.outUnsettled[id]; ok {
				fn(id, od)
			}
			if id == last {
				return
			}
		}
	}
	for id, od := range s.outUnsettled {
		if id-first <= last-first {
			fn(id, od)
		}
	}
}

// onDetach handles the peer's detach: the answer to ours, or a new one we
// answer.
func (s *session) onDetach(d *wire.Detach) error {
	l := s.links[d.Handle]
	if l == nil {
		// A client that gave up on an attach detaches what it never got:
		// nothing to do (Service Bus is as lenient).
		s.c.log.Debug("detach of a handle that is not attached ignored", "channel", s.ch, "handle", d.Handle)
		return nil
	}
	if d.Error != nil {
		s.c.logPeer("peer detached a link with an error", "link", logsafe.Clip(l.name), "condition", logsafe.Clip(string(d.Error.Condition)), "description", logsafe.Clip(d.Error.Description))
	}
	switch l.state {
	case linkDetaching:
		s.dropLinkLocked(d.Handle)
		return nil
	case linkAttaching:
		// The attach is still being decided (a session receiver waiting
		// for a session): it ends when that returns.
		l.peerDetached = true
		l.closed = d.Closed
		l.cancel()
		return nil
	}
	l.closeLocked()
	s.dropLinkLocked(d.Handle)
	reply := &wire.Detach{Handle: d.Handle, Closed: d.Closed}
	if l.sessionful && !l.sessionToken.IsZero() {
		// A session receiver gives its session back before the detach is
		// answered, so that a receiver the peer attaches next can take it
		// at once (its deliver loop would do it a moment later). Giving
		// it back takes the entity's mutex, which the reader must not
		// wait for (see doc.go): that and the answer run on their own.
		entity, id, token := l.entity, l.sessionID, l.sessionToken
		s.c.goSafe(func() {
			_ = s.c.eng.ReleaseSessionToken(context.WithoutCancel(s.c.ctx), s.c.owner, entity, id, token)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.sendLocked(reply)
		})
		return nil
	}
	s.sendLocked(reply)
	return nil
}

// onEnd handles the peer's end: the answer to ours, or a new one we
// answer.
func (s *session) onEnd(e *wire.End) error {
	if e.Error != nil {
		s.c.logPeer("peer ended a session with an error", "channel", s.ch, "condition", logsafe.Clip(string(e.Error.Condition)), "description", logsafe.Clip(e.Error.Description))
	}
	if !s.ending {
		s.sendLocked(&wire.End{})
	}
	s.closeLinksLocked()
	s.done = true
	s.cond.Broadcast()
	s.c.endSession(s.ch)
	return nil
}

// fail ends the session with an error; frames that arrive before the
// peer's end are ignored.
func (s *session) fail(e *wire.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.ending {
		return
	}
	s.c.logPeer("ending a session", "channel", s.ch, "condition", logsafe.Clip(string(e.Condition)), "description", logsafe.Clip(e.Description))
	s.sendLocked(&wire.End{Error: e})
	s.ending = true
	s.closeLinksLocked()
}

// shutdown ends the session because the connection is gone.
func (s *session) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLinksLocked()
	s.done = true
	s.cond.Broadcast()
}

// closeLinksLocked closes every link of the session.
func (s *session) closeLinksLocked() {
	for h, l := range s.links {
		l.closeLocked()
		s.dropLinkLocked(h)
	}
	clear(s.outUnsettled)
	s.cond.Broadcast()
}
