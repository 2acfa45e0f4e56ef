package remote

import (
	"cmp"
	"context"
	"slices"

	"github.com/peeklock/peeklock/broker"
)

// Browse bounds.
const (
	// browseScanLimit is the most messages one Browse peeks at while looking
	// for messages of a category (deferred and scheduled ones can be rare
	// among active ones); the window may come back short past it.
	browseScanLimit = 10_000
	// browsePage is the smallest peek page when filtering by state.
	browsePage = 256
)

// Browse returns a window of messages of one category without locking
// them. Active, Deferred and Scheduled page through the $management node's
// peek and keep the messages whose x-opt-message-state matches (Active
// leaves out the messages this client holds locked); DeadLettered peeks the
// dead-letter and the transfer dead-letter sub-queues and merges them in
// sequence order (a sub-queue's address peeks that one alone); Locked lists
// the locks this client holds, which are the only ones a remote endpoint
// shows. Every message carries the SubQueue it was peeked from.
func (c *Client) Browse(ctx context.Context, req broker.BrowseRequest) ([]*broker.Message, error) {
	if req.Max <= 0 {
		return nil, broker.Errorf(broker.CodeInvalid, "a browse asks for at least one message (Max is %d)", req.Max)
	}
	if req.Category > broker.CategoryDeadLettered {
		return nil, broker.Errorf(broker.CodeInvalid, "unknown category %d", req.Category)
	}
	path, sub := broker.SplitAddress(req.Entity)
	cat := req.Category
	if sub != broker.SubQueueMain {
		cat = broker.CategoryDeadLettered
	}
	if cat == broker.CategoryLocked {
		address := path
		if !c.cfg.serviceBus() {
			address = c.genericAddress(path, false)
		}
		return window(c.locks.held(address, c.clock.Now()), req.FromSequence, req.Max), nil
	}
	if !c.cfg.serviceBus() {
		return nil, notSupported(c.caps().Reason(broker.CanBrowse))
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	if cat == broker.CategoryDeadLettered {
		return c.peekDeadLettered(ctx, path, sub, req.FromSequence, req.Max)
	}
	if c.knownEmpty(path, cat) {
		return nil, nil
	}
	want := broker.StateActive
	switch cat {
	case broker.CategoryDeferred:
		want = broker.StateDeferred
	case broker.CategoryScheduled:
		want = broker.StateScheduled
	}
	if cat == broker.CategoryScheduled && req.DueOrder {
		return c.scheduledByDue(ctx, path, req.FromSequence, req.Max)
	}
	held := map[int64]bool{}
	if cat == broker.CategoryActive {
		for _, m := range c.locks.held(path, c.clock.Now()) {
			held[m.SequenceNumber] = true
		}
	}
	page := req.Max + len(held)
	if cat != broker.CategoryActive && page < browsePage {
		page = browsePage
	}
	var out []*broker.Message
	err := c.scanPeek(ctx, path, req.FromSequence, page, func(m *broker.Message) bool {
		if m.State == want && !held[m.SequenceNumber] && m.SequenceNumber >= req.FromSequence {
			out = append(out, m)
		}
		return len(out) < req.Max
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanPeek peeks path from sequence number from, page messages at a time
// and at most browseScanLimit in all (the $management node peeks in
// sequence order only), and gives each message to take until it returns
// false.
func (c *Client) scanPeek(ctx context.Context, path string, from int64, page int, take func(*broker.Message) bool) error {
	for scanned := 0; scanned < browseScanLimit; {
		msgs, err := c.peek(ctx, path, from, int32(page))
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if !take(m) {
				return nil
			}
		}
		scanned += len(msgs)
		if len(msgs) < page {
			return nil
		}
		from = msgs[len(msgs)-1].SequenceNumber + 1
	}
	return nil
}

// scheduledByDue peeks the scheduled messages of path (see scanPeek),
// orders them by due time, then sequence number, and returns up
// to n of them from the message numbered from (from the first when from is
// 0 or not among them).
func (c *Client) scheduledByDue(ctx context.Context, path string, from int64, n int) ([]*broker.Message, error) {
	var all []*broker.Message
	err := c.scanPeek(ctx, path, 0, browsePage, func(m *broker.Message) bool {
		if m.State == broker.StateScheduled {
			all = append(all, m)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, broker.CompareDue)
	start := 0
	if from > 0 {
		start = max(0, slices.IndexFunc(all, func(m *broker.Message) bool { return m.SequenceNumber == from }))
	}
	all = all[start:]
	return all[:min(len(all), n)], nil
}

// peekDeadLettered peeks the dead-letter sub-queue sub of path, or both
// dead-letter sub-queues merged in sequence order when sub is the main
// queue.
func (c *Client) peekDeadLettered(ctx context.Context, path string, sub broker.SubQueue, from int64, max int) ([]*broker.Message, error) {
	if sub != broker.SubQueueMain {
		return c.peek(ctx, broker.SubQueueAddress(path, sub), from, int32(max))
	}
	var out []*broker.Message
	for _, s := range []broker.SubQueue{broker.SubQueueDeadLetter, broker.SubQueueTransferDeadLetter} {
		msgs, err := c.peek(ctx, broker.SubQueueAddress(path, s), from, int32(max))
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
	}
	slices.SortStableFunc(out, func(a, b *broker.Message) int { return cmp.Compare(a.SequenceNumber, b.SequenceNumber) })
	return out[:min(len(out), max)], nil
}

// window returns the messages with sequence numbers >= from, at most max.
func window(msgs []*broker.Message, from int64, max int) []*broker.Message {
	out := msgs[:0]
	for _, m := range msgs {
		if m.SequenceNumber >= from {
			out = append(out, m)
			if len(out) == max {
				break
			}
		}
	}
	return out
}

// knownEmpty reports whether the last entity list, if recent, counted no
// message of cat in the entity, so that a browse need not peek for it.
func (c *Client) knownEmpty(path string, cat broker.Category) bool {
	if cat != broker.CategoryDeferred && cat != broker.CategoryScheduled {
		return false
	}
	c.mu.Lock()
	ca, ok := c.counts[lower(path)]
	c.mu.Unlock()
	if !ok || c.clock.Since(ca.at) > DefaultCountsFreshness {
		return false
	}
	return ca.counts.Count(cat) == 0
}

// Events returns a nil channel: remote endpoints have no event stream, so
// the dashboard polls.
func (c *Client) Events() (<-chan broker.Event, func()) { return nil, func() {} }
