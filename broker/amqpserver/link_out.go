package amqpserver

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// maxReceiveBatch bounds the messages one engine receive takes for a link.
const maxReceiveBatch = 64

// receiveWait is how long one engine receive waits for a message before
// the deliverer looks again; flows that take credit away cut it short.
const receiveWait = time.Hour

// transferOverhead bounds the bytes of a transfer frame besides its
// payload, to count the frames a delivery needs.
const transferOverhead = 128

// outDelivery is a delivery the listener sent unsettled.
type outDelivery struct {
	link  *link
	token broker.LockToken
	reply bool // a management or CBS response: nothing to settle in the engine
}

// onReceiverFlowLocked takes the peer's flow for an outgoing link: its
// credit (§2.6.7: delivery-count(rcv) + link-credit(rcv) -
// delivery-count(snd)), drain and echo.
func (l *link) onReceiverFlowLocked(f *wire.Flow) {
	dc := f.DeliveryCount.Value // absent: our initial delivery count, 0
	credit := f.LinkCredit.Value
	if f.LinkCredit.Set {
		l.credit = dc + credit - l.outCount
		if l.credit > credit { // the peer's count is behind ours (in flight)
			l.credit = 0
		}
	}
	l.drain = f.Drain
	if f.Drain || l.credit == 0 {
		l.flowSeq++
		if l.waitCancel != nil {
			l.waitCancel()
		}
	}
	if l.kind == kindReplyOut {
		l.s.flushRepliesLocked(l)
		if l.drain {
			l.finishDrainLocked()
		}
	} else {
		l.notify()
	}
	if f.Echo {
		l.s.sendLocked(l.linkFlowLocked(l.outCount, l.credit, l.drain))
	}
}

// finishDrainLocked uses up the remaining credit after a drain, telling the
// peer with a flow.
func (l *link) finishDrainLocked() {
	if !l.drain || l.state != linkAttached {
		return
	}
	l.outCount += l.credit
	l.credit = 0
	l.drain = false
	l.s.sendLocked(l.linkFlowLocked(l.outCount, 0, true))
}

// deliverLoop is the deliverer of an entity link: while the peer gives
// credit it takes messages from the engine (locked under the connection's
// owner, or removed in receive-and-delete mode) and transfers them. The
// engine hands them over as deliveries of the stored messages, not copies;
// the loop receives them into one slice, reused while it lives.
func (l *link) deliverLoop() {
	var buf []broker.Delivery     // the receives' deliveries
	var pending []broker.Delivery // received and delete: taken, not yet sent (in buf)
	defer func() { l.deliverExit(pending) }()
	for {
		n, drain, seq, ok := l.awaitCredit()
		if !ok {
			return
		}
		var ds []broker.Delivery
		switch {
		case len(pending) > 0:
			ds, pending = pending, nil
		case n > 0:
			wait := receiveWait
			if drain {
				wait = 0
			}
			var err error
			buf, err = l.receive(buf[:0], n, wait, seq)
			ds = buf
			if err != nil {
				if l.ctx.Err() != nil {
					return
				}
				if errors.Is(err, errFlowChanged) {
					continue
				}
				l.fail(err)
				return
			}
		}
		left := l.deliver(ds)
		if len(left) > 0 {
			if l.mode == broker.ReceiveAndDelete {
				pending = left
			} else {
				l.giveBack(left)
			}
		}
		if len(pending) == 0 {
			clear(buf) // while the link waits, it keeps no message alive
		}
		if drain {
			l.s.mu.Lock()
			l.finishDrainLocked()
			l.s.mu.Unlock()
		}
	}
}

// errFlowChanged ends a receive that a peer's flow made stale.
var errFlowChanged = broker.Errorf(broker.CodeTimeout, "the peer changed the link credit")

// awaitCredit waits until the link may deliver: it returns how many
// messages to take, whether a drain is asked, and the flow sequence seen;
// ok is false when the link ended.
func (l *link) awaitCredit() (n int, drain bool, seq uint64, ok bool) {
	s := l.s
	for {
		s.mu.Lock()
		if l.state != linkAttached || s.done {
			s.mu.Unlock()
			return 0, false, 0, false
		}
		avail := int(min(l.credit, maxReceiveBatch))
		if l.mode == broker.PeekLock {
			avail = min(avail, s.c.opts.MaxUnsettledPerLink-l.unsettled)
		}
		if avail > 0 || l.drain {
			n, drain, seq = max(avail, 0), l.drain, l.flowSeq
			s.mu.Unlock()
			return n, drain, seq, true
		}
		s.mu.Unlock()
		select {
		case <-l.wake:
		case <-l.ctx.Done():
			return 0, false, 0, false
		}
	}
}

// receive takes up to n messages from the engine, waiting up to wait for
// the first, and appends their deliveries to dst. A flow that takes the
// credit away (or drains) cancels the wait: errFlowChanged.
func (l *link) receive(dst []broker.Delivery, n int, wait time.Duration, seq uint64) ([]broker.Delivery, error) {
	c := l.s.c
	ctx, cancel := context.WithCancel(l.ctx)
	defer cancel()
	l.s.mu.Lock()
	if l.flowSeq != seq {
		l.s.mu.Unlock()
		return dst, errFlowChanged
	}
	l.waitCancel = cancel
	l.s.mu.Unlock()
	defer func() {
		l.s.mu.Lock()
		l.waitCancel = nil
		l.s.mu.Unlock()
	}()
	req := broker.ReceiveRequest{Entity: l.entity, Mode: l.mode, Max: n, MaxWait: wait}
	var err error
	if l.sessionful {
		dst, err = l.eng.ReceiveSessionDeliveries(ctx, c.owner, l.sessionID, req, dst)
	} else {
		dst, err = l.eng.ReceiveDeliveries(ctx, c.owner, req, dst)
	}
	if err != nil && ctx.Err() != nil && l.ctx.Err() == nil {
		return dst, errFlowChanged
	}
	return dst, err
}

// deliver transfers deliveries while credit, the unsettled limit and the
// session window allow, and returns those it could not send.
func (l *link) deliver(ds []broker.Delivery) []broker.Delivery {
	s := l.s
	var buf []byte // each payload is encoded here: its frames are a copy
	for i := range ds {
		d := &ds[i]
		payload := wire.EncodeDelivery(buf[:0], d, wire.EncodeOptions{DeliveryCount: true, LockToken: l.mode == broker.PeekLock})
		buf = payload
		var tag []byte
		if l.mode == broker.PeekLock {
			t := wire.DeliveryTag(d.LockToken)
			tag = t[:]
		}
		// Wait for the writer here, holding no lock: under the lock the
		// delivery is only queued (see TestRawSlowReaderDoesNotStallSettlements).
		if !s.c.w.awaitRoom(l.ctx) {
			return ds[i:]
		}
		s.mu.Lock()
		need := s.framesFor(len(payload))
		for s.remoteIncomingWindow < need && !s.done && l.state == linkAttached {
			s.cond.Wait()
		}
		if s.done || l.state != linkAttached || l.credit == 0 ||
			(l.mode == broker.PeekLock && l.unsettled >= s.c.opts.MaxUnsettledPerLink) {
			s.mu.Unlock()
			return ds[i:]
		}
		if tag == nil {
			l.tagSeq++
			tag = binary.BigEndian.AppendUint64(nil, l.tagSeq)
		}
		id, ok := s.transferLocked(l, tag, payload, l.preSettled)
		if ok && !l.preSettled {
			s.outUnsettled[id] = outDelivery{link: l, token: d.LockToken}
			l.unsettled++
		}
		s.mu.Unlock()
		if !ok {
			return ds[i:]
		}
	}
	return nil
}

// framesFor returns how many transfer frames a payload needs at most,
// never more than the peer's window can ever hold.
func (s *session) framesFor(n int) uint32 {
	room := int(s.c.peerMaxFrame) - transferOverhead
	frames := uint32(1)
	if room > 0 && n > room {
		frames = uint32((n + room - 1) / room)
	}
	return min(frames, sessionWindow/2)
}

// transferLocked queues one delivery on l and returns its delivery id. The
// caller holds s.mu and has checked credit and window; nothing waits here
// (the deliverer waited for the writer's room before it locked), so the
// delivery id, the credit and the window are taken and the frames queued
// in one step, in the order of the session's other frames.
func (s *session) transferLocked(l *link, tag, payload []byte, settled bool) (uint32, bool) {
	id := s.nextDeliveryID
	t := &wire.Transfer{
		Handle:        l.handle,
		DeliveryID:    wire.Some(id),
		DeliveryTag:   tag,
		MessageFormat: wire.Some[uint32](0),
		Settled:       settled,
		Payload:       payload,
	}
	if s.done {
		return 0, false
	}
	var frames uint32
	// Room for the payload and the heads of its frames, as
	// AppendTransferFrames wants it (less would make it grow the chunk).
	size := len(payload) + int(s.framesFor(len(payload)))*wire.TransferHeadBound
	ok, err := s.c.w.encode(true, size, func(b []byte) ([]byte, error) {
		var err error
		b, frames, err = wire.AppendTransferFrames(b, s.ch, t, s.c.peerMaxFrame)
		return b, err
	})
	if err != nil {
		s.c.log.Error("cannot encode a transfer", "link", logsafe.Clip(l.name), "err", logsafe.Err(err))
	}
	if !ok {
		return 0, false
	}
	s.nextDeliveryID++
	s.nextOutgoingID += frames
	s.remoteIncomingWindow -= min(frames, s.remoteIncomingWindow)
	l.credit--
	l.outCount++
	l.moved++
	return id, true
}

// giveBack releases peek-locked deliveries that could not be sent (credit
// went away): their locks end at once, and nothing counts as a failed
// delivery.
func (l *link) giveBack(ds []broker.Delivery) {
	ss := make([]broker.Settlement, len(ds))
	for i := range ds {
		ss[i] = broker.Settlement{Kind: broker.Release, Entity: l.entity, Token: ds[i].LockToken}
	}
	l.eng.SettleMany(context.WithoutCancel(l.ctx), ss)
}

// deliverExit cleans up after the link ended: a session receiver gives its
// session lock back, and messages taken in receive-and-delete mode that
// were not sent are reported lost (that mode's contract).
func (l *link) deliverExit(pending []broker.Delivery) {
	c := l.s.c
	if len(pending) > 0 {
		c.log.Warn("messages received in receive-and-delete mode were lost with their link", "entity", logsafe.Clip(l.entity), "count", len(pending))
	}
	if l.sessionful && !l.sessionToken.IsZero() {
		_ = c.eng.ReleaseSessionToken(context.WithoutCancel(c.ctx), c.owner, l.entity, l.sessionID, l.sessionToken)
	}
}
