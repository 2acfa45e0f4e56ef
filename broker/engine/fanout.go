package engine

import (
	"cmp"
	"slices"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// fanPart is one subscription's part of a topic send.
type fanPart struct {
	en      *entity
	ds      []fanCopy
	forward string            // the subscription's ForwardTo, or ""
	entries []*entry          // copies stored in the subscription, shown once durable
	size    int64             // bytes of entries, counted in en.size
	fw      []*broker.Message // copies to pass on to forward
	fwSeqs  []int64           // their sequence numbers
}

// fanCopy is one copy of a message that a subscription takes.
type fanCopy struct {
	i int             // index in msgs
	k int             // copy number: 0 for the first copy of msgs[i]
	m *broker.Message // msgs[i], or a copy with a rule action applied
}

// sendTopic fans msgs out to the subscriptions whose rules match, all or
// nothing across the topic's own subscriptions: with the topic and every
// subscription locked (in ascending entity id, see the lock order in
// engine.go) it checks every part (message size, each subscription's quota,
// a SessionId for each session-aware subscription), numbers the messages,
// and writes the topic's sequence and the copies of every subscription in
// one store batch, which the store applies atomically, also across a crash.
// A refused part refuses the whole send and nothing is stored. Only once
// the batch is stored (durable stores: on disk) do the copies become
// visible to receivers.
//
// A subscription with ForwardTo stores nothing of its own: its copies are
// passed on to the target after that batch is stored, as a second step that
// is not part of the atomic write. Once the topic has numbered them the
// messages count as accepted: a forward that fails for a reason
// transferFailure knows puts the copies in that subscription's transfer
// dead-letter sub-queue, and the send still succeeds. A crash between the two
// steps loses the forwarded copies of an unacknowledged send while the
// topic's own subscriptions keep theirs.
//
// A subscription may take several copies of one message, one per matching
// rule with an action (see ruleSet.deliveries). Each copy needs its own
// sequence number, so the topic numbers a message with a block of as many
// consecutive numbers as the most copies any subscription takes of it: the
// first copy has the message's number (the one Send and Schedule report),
// the next ones the numbers after it, so copies stay in send order.
func (e *Engine) sendTopic(t *entity, msgs []*broker.Message, hop int, o origin) ([]int64, error) {
	held := e.withSubscriptions(t)
	slices.SortFunc(held, func(a, b *entity) int { return cmp.Compare(a.id, b.id) })
	parts, seqs, p, shown, err := e.fanOutStored(t, held, msgs, o)
	if err != nil {
		return nil, err
	}
	if !shown {
		if err := p.Wait(); err != nil {
			for _, pt := range parts {
				_ = e.withLocked(pt.en, func() error { // a deleted entity counts nothing
					pt.en.size -= pt.size
					return nil
				})
			}
			return nil, storeErr("store the messages", t.path, err)
		}
		for _, pt := range parts {
			if len(pt.entries) > 0 {
				_ = e.withLocked(pt.en, func() error { // a deleted entity shows nothing
					pt.en.show(pt.entries, broker.EventSent, "")
					return nil
				})
			}
		}
	}
	var firstErr error
	for _, pt := range parts {
		if len(pt.fw) == 0 {
			continue
		}
		if err := e.passOn(pt.en, pt.forward, pt.fw, pt.fwSeqs, hop, true, o); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return seqs, firstErr
}

// fanOutStored locks t and its subscriptions list (sorted by entity id),
// fans msgs out (fanOut), commits the one batch and releases the mutexes on
// every path (releaseAll). When the store was done at once, the copies are
// shown already (shown).
func (e *Engine) fanOutStored(t *entity, list []*entity, msgs []*broker.Message, o origin) (parts []fanPart, seqs []int64, p store.Pending, shown bool, err error) {
	held, err := e.lockAll(list, t)
	if err != nil {
		return nil, nil, nil, false, err
	}
	defer e.releaseAll(held)
	now := e.now()
	lastSeq := t.lastSeq
	parts, seqs, recorded, err := e.fanOut(t, held, msgs, now,
		origin{actor: o.actor, via: cmp.Or(o.via, "fanned out from "+t.path)})
	if err != nil {
		return nil, nil, nil, false, err
	}
	for _, s := range held {
		if s != t {
			t.batch.Ops = append(t.batch.Ops, s.batch.Ops...)
			t.batch.Hist = append(t.batch.Hist, s.batch.Hist...)
			s.batch.Reset()
			s.hist.batchMoved()
		}
	}
	p, err = t.commit()
	for _, s := range held {
		s.hist.reset()
	}
	if err != nil {
		for _, pt := range parts {
			pt.en.size -= pt.size
		}
		t.lastSeq = lastSeq
		for _, id := range recorded {
			delete(t.dup, id)
		}
		return nil, nil, nil, false, err
	}
	if _, ok := p.(store.Done); ok {
		for _, pt := range parts {
			pt.en.show(pt.entries, broker.EventSent, "")
		}
		shown = true
	}
	return parts, seqs, p, shown, nil
}

// fanOut does sendTopic's work under the mutexes of t and its subscriptions
// held (t among them): it checks every part, numbers msgs, adds each
// subscription's copies to its batch, their histories saying they come as o
// says, and counts their size. It returns the
// parts, the numbers, and the message ids it recorded in the topic's
// duplicate-detection window. On an error nothing was numbered or counted,
// and no message id recorded.
func (e *Engine) fanOut(t *entity, held []*entity, msgs []*broker.Message, now int64, o origin) ([]fanPart, []int64, []string, error) {
	t.pruneDup(now)
	if err := t.checkSizes(msgs); err != nil {
		return nil, nil, nil, err
	}
	parts := make([]fanPart, 0, len(held)-1)
	var span []int // copies per message, when some subscription takes more than one
	var buf []*broker.Message
	for _, s := range held {
		if s == t {
			continue
		}
		s.processDue(now)
		st := s.settings
		var ds []fanCopy
		var total int64
		for i, m := range msgs {
			buf = s.match.deliveries(buf[:0], m)
			for k, c := range buf {
				if st.RequiresSession && !c.HasSessionID() && st.ForwardTo == "" {
					err := newErr(broker.CodeInvalid, t.path, "message %d has no SessionId but subscription %q requires sessions", i, s.path)
					err.Err = errNoSessionID
					return nil, nil, nil, err
				}
				ds = append(ds, fanCopy{i, k, c})
				total += c.Size
			}
			if len(buf) > 1 {
				if span == nil {
					span = make([]int, len(msgs))
				}
				span[i] = max(span[i], len(buf))
			}
		}
		if room := s.maxTotalSize() - s.size; total > room {
			return nil, nil, nil, newErr(broker.CodeQuotaExceeded, t.path, "subscription %q is full: %d bytes more do not fit in %d MB", s.path, total, st.MaxSizeInMegabytes)
		}
		if len(ds) > 0 {
			parts = append(parts, fanPart{en: s, ds: ds, forward: st.ForwardTo})
		}
	}
	seqs, recorded := t.number(msgs, true, span, now)
	for j := range parts {
		pt := &parts[j]
		for _, d := range pt.ds {
			if seqs[d.i] == 0 {
				continue
			}
			c := *d.m
			c.TimeToLive = msgs[d.i].TimeToLive // as number capped it
			seq := seqs[d.i] + int64(d.k)
			if pt.forward != "" {
				pt.fw = append(pt.fw, &c)
				pt.fwSeqs = append(pt.fwSeqs, seq)
				continue
			}
			pt.entries = append(pt.entries, pt.en.accept(&c, seq, now, broker.SubQueueMain, o))
			pt.size += c.Size
		}
		pt.en.size += pt.size
	}
	return parts, seqs, recorded, nil
}

// lockAll locks the entities of list, which is sorted by entity id, in that
// order, and returns those not deleted (a deleted subscription takes no
// part). When must, which is in list, was deleted, it releases them all and
// returns its ErrNotFound.
func (e *Engine) lockAll(list []*entity, must *entity) ([]*entity, error) {
	held := list[:0]
	var err error
	for _, en := range list {
		if lerr := e.lockEntity(en); lerr != nil {
			if en == must {
				err = lerr
			}
			continue
		}
		held = append(held, en)
	}
	if err != nil {
		e.unlockAll(held)
		return nil, err
	}
	return held, nil
}

// releaseAll is unlockAll for a defer statement, as release is unlock's:
// when the section panicked, the batches of held are dropped before the
// mutexes go, and the panic goes on.
func (e *Engine) releaseAll(held []*entity) {
	if r := recover(); r != nil {
		for _, en := range held {
			en.resetBatch()
		}
		e.unlockAll(held)
		panic(r)
	}
	e.unlockAll(held)
}

// unlockAll releases the mutexes of held as unlock does, and forwards what
// dead-lettering queued for other entities only once every one of them is
// released, so that no entity mutex is taken while another is held.
func (e *Engine) unlockAll(held []*entity) {
	var outs [][]outItem
	for i, en := range held {
		en.scheduleNext()
		if len(en.outbox) > 0 {
			if outs == nil {
				outs = make([][]outItem, len(held))
			}
			outs[i] = en.outbox
			en.outbox = nil
			e.flushes.begin() // before the mutex goes: Tick sees it
		}
		en.mu.Unlock()
	}
	for i, out := range outs {
		if len(out) > 0 {
			e.flushOutbox(held[i], out)
			e.flushes.end()
		}
	}
}
