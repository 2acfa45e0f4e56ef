package amqpserver

import (
	"context"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// maxSettleBatch bounds the settlements of one link applied with one
// engine call.
const maxSettleBatch = 64

// settleReq is a peer's outcome for one of our peek-locked deliveries,
// mapped (settlementFor) when it arrives: the frame's buffer is reused.
type settleReq struct {
	id          uint32
	settle      broker.Settlement // unless err
	reply       wire.DeliveryState
	err         error
	peerSettled bool // the peer settled (mode first): no answer is sent
}

// settleOutLocked takes the peer's disposition of one of our deliveries:
// responses are forgotten; message outcomes go to the link's settler.
func (s *session) settleOutLocked(id uint32, od outDelivery, d *wire.Disposition) {
	terminal := d.State != nil
	if _, ok := d.State.(wire.Received); ok {
		terminal = false
	}
	if !d.Settled && !terminal {
		return // a non-terminal state: the outcome comes later
	}
	delete(s.outUnsettled, id)
	l := od.link
	if od.reply {
		l.unsettled--
		if !d.Settled {
			s.sendLocked(&wire.Disposition{Role: wire.RoleSender, First: id, Settled: true, State: d.State})
		}
		return
	}
	if l.settleQ == nil {
		l.settledLocked(1)
		return
	}
	// The delivery stays counted in l.unsettled until settleLoop has
	// applied its outcome, so that the queue never holds more outcomes
	// than the link has unsettled deliveries.
	st, reply, err := settlementFor(d.State, l.entity, od.token)
	l.settleQ.pushLocked(settleReq{id: id, settle: st, reply: reply, err: err, peerSettled: d.Settled})
}

// settleQueue hands the peer's outcomes to a link's settler goroutine. It
// holds what waits, no more (at most the link's unsettled deliveries), so
// that a link with a large credit costs memory only for the deliveries it
// really has. Its fields are guarded by the session's mutex.
type settleQueue struct {
	reqs   []settleReq
	spare  []settleReq   // the array of the settler's last list, for the next one
	closed bool          // the link ended: the settler stops when reqs is empty
	wake   chan struct{} // nudges the settler (capacity 1)
}

func newSettleQueue() *settleQueue { return &settleQueue{wake: make(chan struct{}, 1)} }

func (q *settleQueue) pushLocked(r settleReq) {
	if q.reqs == nil {
		q.reqs, q.spare = q.spare, nil
	}
	q.reqs = append(q.reqs, r)
	q.nudge()
}

func (q *settleQueue) closeLocked() {
	q.closed = true
	q.nudge()
}

func (q *settleQueue) nudge() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// doneLocked gives back the array of a list takeLocked returned, once the
// settler is through with it: the queue no longer uses that part of its
// array, so the next pushes may fill it instead of a new one.
func (q *settleQueue) doneLocked(list []settleReq) {
	clear(list)
	q.spare = list[:0]
}

// takeLocked removes and returns up to max outcomes; done is true when
// none is left and the link ended.
func (q *settleQueue) takeLocked(max int) (list []settleReq, done bool) {
	n := min(len(q.reqs), max)
	list = q.reqs[:n:n]
	q.reqs = q.reqs[n:]
	if len(q.reqs) == 0 {
		q.reqs = nil // appends start on the spare array; list keeps this one
	}
	return list, n == 0 && q.closed
}

// settleLoop applies the peer's outcomes in the engine, a run of them with
// one call, and answers each unsettled one with a settled disposition (in
// rcv-settle-mode second the client waits for it).
func (l *link) settleLoop(q *settleQueue) {
	c := l.s.c
	for {
		l.s.mu.Lock()
		list, done := q.takeLocked(maxSettleBatch)
		l.s.mu.Unlock()
		if done {
			return
		}
		if len(list) == 0 {
			<-q.wake
			continue
		}
		replies := make([]wire.DeliveryState, len(list))
		var ss []broker.Settlement
		var idx []int
		for i, r := range list {
			switch {
			case r.err != nil:
				replies[i] = wire.Rejected{Error: l.wireError(r.err)}
			default:
				replies[i] = r.reply
				ss = append(ss, r.settle)
				idx = append(idx, i)
			}
		}
		if len(ss) > 0 {
			errs := l.eng.SettleMany(context.WithoutCancel(l.ctx), ss)
			for k, err := range errs {
				if err != nil {
					i := idx[k]
					replies[i] = wire.Rejected{Error: l.wireError(err)}
					if list[i].peerSettled {
						c.logPeer("a settlement the client did not wait for failed", "entity", logsafe.Clip(l.entity), "err", logsafe.Err(err))
					}
				}
			}
		}
		s := l.s
		s.mu.Lock()
		run := s.newDispositionRun(wire.RoleSender)
		for i, r := range list {
			if !r.peerSettled {
				run.addLocked(r.id, true, replies[i])
			}
		}
		run.flushLocked()
		q.doneLocked(list)
		l.settledLocked(len(list))
		s.mu.Unlock()
	}
}

// settledLocked takes n settled deliveries off the link's unsettled count
// and wakes its deliverer when the unsettled limit held it back, only
// then: a deliverer waiting for credit would wake for nothing, once per
// batch of outcomes. closeLocked zeroes the count of a link that ended
// meanwhile.
func (l *link) settledLocked(n int) {
	held := l.unsettled >= l.s.c.opts.MaxUnsettledPerLink
	l.unsettled = max(l.unsettled-n, 0)
	if held {
		l.notify()
	}
}

// settlementFor maps a peer's outcome of a peek-locked delivery to an
// engine settlement, and returns the state that confirms it:
//
//	accepted                          complete
//	modified, undeliverable-here      defer (message-annotations: properties to modify)
//	modified                          abandon (likewise)
//	rejected                          dead-letter: com.microsoft:dead-letter with
//	                                  DeadLetterReason and DeadLetterErrorDescription
//	                                  in its info (the rest: properties to modify), or
//	                                  another condition as the reason
//	released, or settled without one  release (give back; not a failed
//	                                  delivery, so DeliveryCount stays)
//
// It returns the settlement by value: one of them per message outcome,
// kept in the link's queue, costs no allocation of its own.
func settlementFor(state wire.DeliveryState, entity string, token broker.LockToken) (broker.Settlement, wire.DeliveryState, error) {
	s := broker.Settlement{Entity: entity, Token: token}
	switch st := state.(type) {
	case wire.Accepted:
		s.Kind = broker.Complete
		return s, wire.Accepted{}, nil
	case wire.Modified:
		props, err := propertiesToModify(st.MessageAnnotations)
		if err != nil {
			return broker.Settlement{}, nil, err
		}
		s.Kind, s.PropertiesToModify = broker.Abandon, props
		if st.UndeliverableHere {
			s.Kind = broker.Defer
		}
		return s, wire.Modified{DeliveryFailed: st.DeliveryFailed, UndeliverableHere: st.UndeliverableHere}, nil
	case wire.Rejected:
		s.Kind = broker.DeadLetter
		if e := st.Error; e != nil {
			if e.Condition == wire.CondDeadLetter {
				props, err := propertiesToModify(e.Info)
				if err != nil {
					return broker.Settlement{}, nil, err
				}
				s.Reason, _ = props[broker.PropDeadLetterReason].(string)
				s.Description, _ = props[broker.PropDeadLetterErrorDescription].(string)
				delete(props, broker.PropDeadLetterReason)
				delete(props, broker.PropDeadLetterErrorDescription)
				if len(props) > 0 {
					s.PropertiesToModify = props
				}
			} else {
				s.Reason, s.Description = string(e.Condition), e.Description
			}
		}
		// Confirmed without an error: go-amqp turns an error in the
		// confirmation into a failure of the dead-lettering.
		return s, wire.Rejected{}, nil
	case wire.Released, nil, wire.Received:
		s.Kind = broker.Release
		return s, wire.Released{}, nil
	}
	return broker.Settlement{}, nil, broker.Errorf(broker.CodeNotSupported, "delivery state %T is not supported (no transactions)", state)
}
