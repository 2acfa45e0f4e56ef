package amqpserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// maxStoreBatch bounds the deliveries of one link stored with one engine
// call (one group commit, in order): the whole credit of a sender, so that
// what a client keeps in flight on one link waits for one disk sync, not
// for several in a row.
const maxStoreBatch = MaxSenderCredit

// inDelivery is a delivery the peer sends, reassembled from its transfers.
type inDelivery struct {
	id       uint32
	format   uint32
	settled  bool // pre-settled: no outcome is sent
	payload  []byte
	size     uint64
	tooLarge bool
}

// onTransferLocked takes one transfer frame of an incoming link: credit,
// reassembly (capped at the link's maximum message size) and, at the last
// frame, the delivery's dispatch.
func (l *link) onTransferLocked(t *wire.Transfer) {
	if l.partial == nil && !t.More && !t.Aborted {
		// A delivery of one transfer, the usual case: nothing to
		// reassemble, and nothing on the heap but its payload.
		var d inDelivery
		if !l.startDeliveryLocked(t, &d) {
			return
		}
		d.settled = t.Settled
		d.size = uint64(len(t.Payload))
		if d.size > l.maxSize {
			d.tooLarge = true
		} else {
			d.payload = make([]byte, len(t.Payload))
			copy(d.payload, t.Payload) // t.Payload lives in the read buffer
		}
		l.dispatchLocked(&d)
		return
	}
	d := l.partial
	if d == nil {
		d = new(inDelivery)
		if !l.startDeliveryLocked(t, d) {
			return
		}
	} else if id, ok := t.DeliveryID.Get(); ok && id != d.id {
		l.failLocked(&wire.Error{Condition: wire.CondInvalidField,
			Description: fmt.Sprintf("a continuation transfer of delivery %d carries delivery-id %d", d.id, id)})
		return
	}
	if t.Settled {
		d.settled = true
	}
	if t.Aborted {
		l.partial = nil
		l.inflight--
		l.replenishLocked()
		return
	}
	d.size += uint64(len(t.Payload))
	if !d.tooLarge && d.size > l.maxSize {
		d.tooLarge, d.payload = true, nil
	}
	if !d.tooLarge {
		d.payload = append(d.payload, t.Payload...)
	}
	if t.More {
		l.partial = d
		return
	}
	l.partial = nil
	l.dispatchLocked(d)
}

// startDeliveryLocked checks the first transfer of a delivery, takes a
// unit of credit for it and fills in d's id and format; false when the
// transfer broke the protocol (the link is failing).
func (l *link) startDeliveryLocked(t *wire.Transfer, d *inDelivery) bool {
	id, ok := t.DeliveryID.Get()
	if !ok {
		l.failLocked(&wire.Error{Condition: wire.CondInvalidField, Description: "the first transfer of a delivery has no delivery-id"})
		return false
	}
	if l.creditLimit == l.deliveryCount {
		l.failLocked(&wire.Error{Condition: wire.CondTransferLimitExceeded, Description: "a transfer without link credit"})
		return false
	}
	l.deliveryCount++
	l.inflight++
	l.moved++
	d.id, d.format = id, t.MessageFormat.Value
	if m, ok := t.RcvSettleMode.Get(); ok && m == wire.ReceiverSettleSecond && l.rcvMode.Value != wire.ReceiverSettleSecond {
		l.failLocked(&wire.Error{Condition: wire.CondInvalidField, Description: "a transfer asks for rcv-settle-mode second on a link attached with first"})
		return false
	}
	return true
}

// dispatchLocked hands a whole delivery on: to the burst of an entity link
// (handed to its store goroutine when the reader has no whole frame left
// to read, see handBurstLocked), or to a request goroutine.
func (l *link) dispatchLocked(d *inDelivery) {
	if d.tooLarge {
		err := broker.Errorf(broker.CodeMessageTooLarge, "the message of %d bytes exceeds the maximum of %d bytes", d.size, l.maxSize)
		l.outcomeLocked(d, wire.Rejected{Error: l.wireError(err)})
		l.inflight--
		l.replenishLocked()
		return
	}
	if l.kind == kindRequestIn {
		l.outcomeLocked(d, wire.Accepted{})
		req := *d
		l.s.c.goSafe(func() { l.handleRequest(&req) })
		return
	}
	if len(l.burst) >= int(l.creditMax) { // cannot happen: a burst holds at most the credit
		l.failLocked(&wire.Error{Condition: wire.CondTransferLimitExceeded, Description: "too many deliveries in flight"})
		return
	}
	if len(l.burst) == 0 {
		if l.burst == nil {
			l.burst, l.spareBurst = l.spareBurst, nil
		}
		l.s.c.bursts = append(l.s.c.bursts, l)
	}
	l.burst = append(l.burst, *d)
}

// handBurstLocked hands the deliveries read for l since the last burst to
// its store goroutine, all at once: one wake-up of that goroutine, one
// engine call and one disposition frame for what one read brought, where
// handing each delivery on as it was decoded woke the store goroutine for
// the first and split the rest. It reports false when the queue had no
// room, which cannot happen (it holds the whole credit, and a burst at
// least one delivery): the burst is dropped.
func (l *link) handBurstLocked() bool {
	if len(l.burst) == 0 {
		return true
	}
	b := l.burst
	l.burst = nil
	select {
	case l.inQ <- b:
		return true
	default:
		return false
	}
}

// handBursts hands on the bursts of every link that has one (reader
// goroutine only): when the next frame is not read yet, and before any
// frame other than a transfer, so that the peer's flows, dispositions and
// detaches find the deliveries before them handed on, as they were
// before bursts.
func (c *conn) handBursts() {
	for i, l := range c.bursts {
		c.bursts[i] = nil
		s := l.s
		s.mu.Lock()
		if !l.handBurstLocked() {
			l.failLocked(&wire.Error{Condition: wire.CondTransferLimitExceeded, Description: "too many deliveries in flight"})
		}
		s.mu.Unlock()
	}
	c.bursts = c.bursts[:0]
}

// outcomeLocked sends the outcome of an incoming delivery, settled (nothing
// for a pre-settled one). Service Bus settles at once in rcv-settle-mode
// second too, which it echoes when a sender asks for it: Microsoft's C
// stack (uamqp, the Python SDK's) asks for second on every sender, counts a
// send done only at a settled disposition, and never settles itself.
func (l *link) outcomeLocked(d *inDelivery, state wire.DeliveryState) {
	run := l.s.newDispositionRun(wire.RoleReceiver)
	l.outcomeToLocked(run, d, state)
	run.flushLocked()
}

// outcomeToLocked is outcomeLocked for a run of outcomes sent as ranges.
func (l *link) outcomeToLocked(run *dispositionRun, d *inDelivery, state wire.DeliveryState) {
	if d.settled || l.state != linkAttached {
		return
	}
	run.addLocked(d.id, true, state)
}

// replenishLocked gives the peer credit again when half of it is used.
func (l *link) replenishLocked() {
	if l.state != linkAttached {
		return
	}
	remaining := l.creditLimit - l.deliveryCount
	room := l.creditMax - uint32(min(l.inflight, int(l.creditMax)))
	if remaining < room && remaining <= l.creditMax/2 {
		l.creditLimit = l.deliveryCount + room
		l.s.sendLocked(l.linkFlowLocked(l.deliveryCount, room, false))
	}
}

// onFlowLocked takes a flow of the peer for this link.
func (l *link) onFlowLocked(f *wire.Flow) {
	if l.incoming() {
		// The sender's view: a drained sender advances its delivery
		// count within the credit it had.
		if dc, ok := f.DeliveryCount.Get(); ok && dc-l.deliveryCount <= l.creditLimit-l.deliveryCount {
			l.deliveryCount = dc
		}
		if f.Echo {
			l.s.sendLocked(l.linkFlowLocked(l.deliveryCount, l.creditLimit-l.deliveryCount, false))
		}
		return
	}
	l.onReceiverFlowLocked(f)
}

// storeLoop stores the deliveries of an entity link in order, a run of
// them with one engine call, and sends their outcomes.
func (l *link) storeLoop(q <-chan []inDelivery) {
	// Deliveries the client handed over are stored even if the connection
	// drops meanwhile.
	st := storeScratch{ctx: context.WithoutCancel(l.ctx)}
	for b := range q {
		list := append(st.list[:0], b...)
		clear(b)
		st.spare = b // given back to the reader by store
		for len(list) < maxStoreBatch {
			more, ok := takeNow(q)
			if !ok {
				break
			}
			list = append(list, more...)
		}
		st.list = list
		l.store(&st)
		clear(st.list) // the payloads are the engine's now, or garbage
	}
}

// takeNow returns a burst if q holds one, without waiting.
func takeNow(q <-chan []inDelivery) ([]inDelivery, bool) {
	select {
	case b, ok := <-q:
		return b, ok
	default:
		return nil, false
	}
}

// storeScratch is what the store goroutine of a link reuses from one run
// of deliveries to the next.
type storeScratch struct {
	ctx   context.Context // the link's, without its cancellation
	dec   wire.MessageDecoder
	list  []inDelivery
	spare []inDelivery // a burst copied into list, for the reader to gather the next one in
	errs  []error
	msgs  []*broker.Message
	run   []int
	batch []*broker.Message
}

// store stores a list of deliveries, keeping their order: consecutive
// single messages go in one engine call (retried one by one if it fails,
// so each gets its own outcome); a batch delivery is stored alone, all or
// nothing.
func (l *link) store(st *storeScratch) {
	c := l.s.c
	list, ctx := st.list, st.ctx
	errs := slices.Grow(st.errs[:0], len(list))[:len(list)]
	msgs := slices.Grow(st.msgs[:0], len(list))[:len(list)]
	run := st.run[:0]
	flush := func() {
		if len(run) == 0 {
			return
		}
		batch := st.batch[:0]
		for _, k := range run {
			batch = append(batch, msgs[k])
		}
		// The engine keeps the messages decoded here without copying
		// them; a failed send keeps none, and the retry copies.
		err := l.eng.SendOwned(ctx, l.entity, batch)
		if err != nil && len(run) > 1 {
			for _, k := range run {
				errs[k] = l.eng.Send(ctx, l.entity, []*broker.Message{msgs[k]})
			}
		} else {
			for _, k := range run {
				errs[k] = err
			}
		}
		clear(batch)
		st.batch = batch
		run = run[:0]
	}
	for i := range list {
		d := &list[i]
		switch d.format {
		case 0:
			m, err := st.dec.DecodeOwned(d.payload) // d.payload is this delivery's own
			if err != nil {
				errs[i] = err
				continue
			}
			msgs[i] = m
			run = append(run, i)
		case wire.MessageFormatBatch:
			flush()
			errs[i] = l.storeBatch(ctx, &st.dec, d.payload)
		default:
			errs[i] = broker.Errorf(broker.CodeInvalid, "message format 0x%08x is not supported", d.format)
		}
	}
	flush()
	st.run = run
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	answers := s.newDispositionRun(wire.RoleReceiver)
	for i := range list {
		d := &list[i]
		if errs[i] != nil {
			if d.settled {
				c.log.Warn("a pre-settled message could not be stored and is lost", "entity", logsafe.Clip(l.entity), "err", logsafe.Err(errs[i]))
			}
			l.outcomeToLocked(answers, d, wire.Rejected{Error: l.wireError(errs[i])})
		} else {
			l.outcomeToLocked(answers, d, wire.Accepted{})
		}
	}
	answers.flushLocked()
	l.inflight -= len(list)
	l.replenishLocked()
	if l.spareBurst == nil && st.spare != nil {
		l.spareBurst = st.spare[:0]
	}
	st.spare = nil
	clear(errs)
	clear(msgs)
	st.errs, st.msgs = errs, msgs
}

// storeBatch stores the messages of a batch delivery with one engine call.
func (l *link) storeBatch(ctx context.Context, dec *wire.MessageDecoder, payload []byte) error {
	parts, err := wire.SplitBatch(payload)
	if err != nil {
		return err
	}
	msgs := make([]*broker.Message, len(parts))
	for i, p := range parts {
		m, err := dec.DecodeOwned(p) // a part of the delivery's own payload
		if err != nil {
			return fmt.Errorf("message %d of the batch: %w", i, err)
		}
		msgs[i] = m
	}
	return l.eng.SendOwned(ctx, l.entity, msgs)
}
