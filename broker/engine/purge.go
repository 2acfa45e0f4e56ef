package engine

import (
	"context"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// purgeChunk bounds the store batches of a purge.
const purgeChunk = 10000

// Purge removes every message of an entity's main queue (active, locked,
// deferred and scheduled) or of one of its sub-queues (sub, or the address's
// suffix), and returns how many it removed. Locks on removed messages are lost. Purging a topic purges
// each of its subscriptions.
func (e *Engine) Purge(ctx context.Context, addr string, sub broker.SubQueue) (int64, error) {
	if err := e.begin(ctx); err != nil {
		return 0, err
	}
	defer e.leave()
	en, s, err := e.lookup(addr)
	if err != nil {
		return 0, err
	}
	if sub > broker.SubQueueTransferDeadLetter {
		return 0, newErr(broker.CodeInvalid, en.path, "unknown sub-queue %d", sub)
	}
	if s != broker.SubQueueMain {
		if sub != broker.SubQueueMain && sub != s {
			return 0, newErr(broker.CodeInvalid, en.path, "the address %q names the %s but the purge asks for the %s", addr, s, sub)
		}
		sub = s
	}
	targets := []*entity{en}
	if en.kind == broker.KindTopic {
		targets = e.subscriptions(en)
	}
	var n int64
	for _, t := range targets {
		k, err := e.purge(t, sub)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (e *Engine) purge(en *entity, sub broker.SubQueue) (int64, error) {
	var n int64
	var pend []store.Pending
	if err := e.withDue(en, func(int64) (err error) {
		n, pend, err = en.purge(sub)
		return err
	}); err != nil {
		return n, err
	}
	for _, p := range pend {
		if err := p.Wait(); err != nil {
			return n, storeErr("purge", en.path, err)
		}
	}
	e.emitEntity(broker.EventPurged, en.path, sub, "")
	return n, nil
}

// purge removes every message of the sub-queue, committing in chunks, and
// returns how many and the pending batches. Called with en locked.
func (en *entity) purge(sub broker.SubQueue) (int64, []store.Pending, error) {
	var xs []*entry
	collect := func(t *seqSet) {
		t.Scan(func(x *entry) bool { xs = append(xs, x); return true })
	}
	q := &en.q[sub]
	collect(q.active)
	collect(q.locked)
	collect(q.deferred)
	if sub == broker.SubQueueMain {
		collect(en.scheduled)
	}
	var pend []store.Pending
	for i, x := range xs {
		if x.locked() {
			en.emit(broker.EventLockLost, x, "purged")
		}
		en.remove(x)
		if (i+1)%purgeChunk == 0 {
			p, err := en.commit()
			if err != nil {
				return int64(i + 1), pend, err
			}
			pend = append(pend, p)
		}
	}
	p, err := en.commit()
	if err != nil {
		return int64(len(xs)), pend, err
	}
	return int64(len(xs)), append(pend, p), nil
}
