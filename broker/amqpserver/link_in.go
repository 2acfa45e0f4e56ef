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
	d := l.partial
	if d == nil {
		id, ok := t.DeliveryID.Get()
		if !ok {
			l.failLocked(&wire.Error{Condition: wire.CondInvalidField, Description: "the first transfer of a delivery has no delivery-id"})
			return
		}
		if l.creditLimit == l.deliveryCount {
			l.failLocked(&wire.Error{Condition: wire.CondTransferLimitExceeded, Description: "a transfer without link credit"})
			return
		}
		l.deliveryCount++
		l.inflight++
		l.moved++
		d = &inDelivery{id: id, format: t.MessageFormat.Value}
		if m, ok := t.RcvSettleMode.Get(); ok && m == wire.ReceiverSettleSecond && l.rcvMode.Value != wire.ReceiverSettleSecond {
			l.failLocked(&wire.Error{Condition: wire.CondInvalidField, Description: "a transfer asks for rcv-settle-mode second on a link attached with first"})
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

// dispatchLocked hands a whole delivery on: to the store goroutine of an
// entity link, or to a request goroutine.
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
		l.s.c.goSafe(func() { l.handleRequest(d) })
		return
	}
	select {
	case l.inQ <- d:
	default: // cannot happen: the queue holds the whole credit
		l.failLocked(&wire.Error{Condition: wire.CondTransferLimitExceeded, Description: "too many deliveries in flight"})
	}
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
func (l *link) storeLoop(q <-chan *inDelivery) {
	// Deliveries the client handed over are stored even if the connection
	// drops meanwhile.
	st := storeScratch{ctx: context.WithoutCancel(l.ctx)}
	for d := range q {
		st.list = gather(st.list[:0], d, q, maxStoreBatch)
		l.store(&st)
		st.release()
	}
}

// storeScratch is what the store goroutine of a link reuses from one run
// of deliveries to the next.
type storeScratch struct {
	ctx   context.Context // the link's, without its cancellation
	dec   wire.MessageDecoder
	list  []*inDelivery
	errs  []error
	msgs  []*broker.Message
	run   []int
	batch []*broker.Message
}

// keptScratch bounds the runs whose lists a store goroutine keeps for the
// next: a link that once stored its whole credit at once does not keep
// lists that size while it idles.
const keptScratch = 64

// release drops what the last run left in the lists, and the lists too
// when they grew past keptScratch.
func (st *storeScratch) release() {
	if cap(st.list) > keptScratch {
		st.list, st.errs, st.msgs, st.run, st.batch = nil, nil, nil, nil, nil
		return
	}
	clear(st.list[:cap(st.list)])
	clear(st.errs[:cap(st.errs)])
	clear(st.msgs[:cap(st.msgs)])
	clear(st.batch[:cap(st.batch)])
}

// store stores the deliveries of st.list, keeping their order: consecutive
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
		st.batch = batch
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
		run = run[:0]
	}
	for i, d := range list {
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
	st.errs, st.msgs, st.run = errs, msgs, run
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	answers := s.newDispositionRun(wire.RoleReceiver)
	for i, d := range list {
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

// gather appends first and whatever else q holds right now to list, up to
// max in all, without waiting: the batch one engine call handles.
func gather[T any](list []T, first T, q <-chan T, max int) []T {
	list = append(list, first)
	for len(list) < max {
		select {
		case more, ok := <-q:
			if !ok {
				return list
			}
			list = append(list, more)
		default:
			return list
		}
	}
	return list
}
