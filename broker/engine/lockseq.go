package engine

import (
	"context"

	"github.com/peeklock/peeklock/broker"
)

var _ broker.SequenceLocker = (*Engine)(nil)

// LockSequence locks available messages by sequence number as the
// engine's own client (owner 0); see LockSequenceAs. It implements
// broker.SequenceLocker.
func (e *Engine) LockSequence(ctx context.Context, entity string, seqs []int64) ([]*broker.Message, error) {
	return e.LockSequenceAs(ctx, 0, entity, seqs)
}

// LockSequenceAs locks, under owner, the available (active and unlocked)
// messages of an entity or of one of its sub-queues (by address suffix)
// whose sequence numbers are seqs, and hands them over as ReceiveAs does:
// the messages before them stay where they are, unlocked, and no delivery
// count changes. Every number must name an available message; otherwise
// nothing is locked and the error is ErrMessageNotFound, saying whether the
// message is locked by another receiver, deferred, or not there. A topic,
// and the main queue of a session-aware entity (its messages are locked
// through their session), are refused with CodeInvalid.
func (e *Engine) LockSequenceAs(ctx context.Context, owner uint64, entity string, seqs []int64) ([]*broker.Message, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	en, sub, err := e.lookup(entity)
	if err != nil {
		return nil, err
	}
	switch {
	case en.kind == broker.KindTopic:
		return nil, newErr(broker.CodeInvalid, en.path, "messages cannot be locked in a topic; use one of its subscriptions")
	case len(seqs) == 0:
		return nil, newErr(broker.CodeInvalid, en.path, "lock by sequence number: no sequence numbers given")
	case sub == broker.SubQueueMain && en.requiresSession():
		return nil, newErr(broker.CodeInvalid, en.path, "the entity requires sessions: accept a session and receive from it")
	}
	var hs []handout
	if err := e.withDue(en, func(now int64) (err error) {
		hs, err = en.lockSequence(owner, sub, seqs, now, e.by("locked by sequence number"))
		return err
	}); err != nil {
		return nil, err
	}
	return e.bodies(en, hs)
}

// lockSequence is LockSequenceAs's work under en's mutex: all the messages
// locked and committed, or none, as o says.
func (en *entity) lockSequence(owner uint64, sub broker.SubQueue, seqs []int64, now int64, o origin) ([]handout, error) {
	if err := en.receiveRefused(); err != nil {
		return nil, err
	}
	en.touch(now)
	q := &en.q[sub]
	xs := make([]*entry, 0, len(seqs))
	seen := make(map[int64]bool, len(seqs))
	for _, seq := range seqs {
		if seen[seq] {
			continue
		}
		seen[seq] = true
		x, ok := q.active.Get(seq)
		if ok && x.sub == broker.SubQueueMain && x.expires != 0 && x.expires <= now {
			en.unindex(x)
			en.expire(x) // never hand out an expired message
			ok = false
		}
		if !ok {
			msg := "no available message with sequence number %d in the %s"
			if _, locked := q.locked.Get(seq); locked {
				msg = "the message with sequence number %d in the %s is locked by another receiver"
			} else if _, deferred := q.deferred.Get(seq); deferred {
				msg = "the message with sequence number %d in the %s is deferred: receive it as a deferred message"
			}
			en.commitQuiet()
			return nil, newErr(broker.CodeMessageNotFound, en.path, msg, seq, sub)
		}
		xs = append(xs, x)
	}
	hs := make([]handout, 0, len(xs))
	for _, x := range xs {
		hs = append(hs, en.lock(x, owner, now, o))
	}
	if _, err := en.commit(); err != nil {
		return nil, err
	}
	return hs, nil
}
