package engine

import (
	"context"
	"slices"

	"github.com/peeklock/peeklock/broker"
)

// Browse returns up to req.Max messages of one category with sequence
// numbers >= req.FromSequence, in ascending order, without locking them or
// changing their delivery count. Locked messages carry LockToken and
// LockedUntil. The dead-lettered category holds the whole dead-letter and
// transfer dead-letter sub-queues (locked and deferred ones included), merged
// in sequence order; a sub-queue's address browses that sub-queue alone.
// Every message carries the SubQueue it is in. The cost is O(log n + window)
// whatever the entity's size.
func (e *Engine) Browse(ctx context.Context, req broker.BrowseRequest) ([]*broker.Message, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	en, sub, err := e.lookup(req.Entity)
	if err != nil {
		return nil, err
	}
	if req.Max <= 0 {
		return nil, newErr(broker.CodeInvalid, en.path, "a browse asks for at least one message (Max is %d)", req.Max)
	}
	cat := req.Category
	if sub != broker.SubQueueMain {
		cat = broker.CategoryDeadLettered
	}
	if cat > broker.CategoryDeadLettered {
		return nil, newErr(broker.CodeInvalid, en.path, "unknown category %d", cat)
	}
	var hs []handout
	if err := e.withDue(en, func(int64) error {
		hs = en.browse(req, sub, cat)
		return nil
	}); err != nil {
		return nil, err
	}
	return e.bodies(en, hs)
}

// browse picks Browse's messages. Called with en locked; it only reads.
func (en *entity) browse(req broker.BrowseRequest, sub broker.SubQueue, cat broker.Category) []handout {
	var trees []*seqSet
	m := &en.q[broker.SubQueueMain]
	switch cat {
	case broker.CategoryActive:
		trees = []*seqSet{m.active}
	case broker.CategoryLocked:
		trees = []*seqSet{m.locked}
	case broker.CategoryDeferred:
		trees = []*seqSet{m.deferred}
	case broker.CategoryScheduled:
		trees = []*seqSet{en.scheduled}
	case broker.CategoryDeadLettered:
		subs := []broker.SubQueue{broker.SubQueueDeadLetter, broker.SubQueueTransferDeadLetter}
		if sub != broker.SubQueueMain {
			subs = []broker.SubQueue{sub}
		}
		for _, s := range subs {
			d := &en.q[s]
			trees = append(trees, d.active, d.locked, d.deferred)
		}
	}
	var picked []*entry
	if cat == broker.CategoryScheduled && req.DueOrder {
		picked = en.scheduledByDue(req.FromSequence, req.Max)
		trees = nil
	}
	for _, t := range trees {
		n := 0
		t.Ascend(req.FromSequence, func(x *entry) bool {
			picked = append(picked, x)
			n++
			return n < req.Max
		})
	}
	if len(trees) > 1 {
		slices.SortFunc(picked, func(a, b *entry) int { return cmpInt64(a.seq, b.seq) })
		if len(picked) > req.Max {
			picked = picked[:req.Max]
		}
	}
	hs := make([]handout, len(picked))
	for i, x := range picked {
		hs[i] = handout{loc: x.loc(en.id), token: x.token, delivery: x.deliveryCount(), state: x.state, peek: true}
		if x.locked() {
			hs[i].until = x.at
		}
	}
	return hs
}

// scheduledByDue returns up to max scheduled messages in due order (time,
// then sequence number), from the message numbered from, or from the first
// when from is 0 or no longer scheduled.
func (en *entity) scheduledByDue(from int64, max int) []*entry {
	start := &entry{}
	if x, ok := en.scheduled.Get(from); ok && from > 0 {
		start = x
	}
	var picked []*entry
	en.schedAt.Ascend(start, func(x *entry) bool {
		picked = append(picked, x)
		return len(picked) < max
	})
	return picked
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
