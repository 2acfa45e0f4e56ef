package model

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
)

// maxResubmitScan bounds how many dead-lettered messages a resubmit looks
// through, on an endpoint that cannot lock by sequence number, to find the
// chosen ones.
const maxResubmitScan = 5000

// dlqItem is a locked message of one of the dead-letter sub-queues with the
// address it was received from (where it is settled).
type dlqItem struct {
	dlq string
	msg *broker.Message
}

// startResubmitJob resubmits the dead-lettered messages with the given
// sequence numbers, from either dead-letter sub-queue, touching those
// messages only. Each is locked first: the held ones already are; the
// others are locked by sequence number where the endpoint can
// (broker.SequenceLocker: the embedded engine), else received from the
// head of their dead-letter queue up to the last chosen one (see
// receiveUpTo), the others received on the way given back at once with
// broker.Release, which counts no delivery. Then broker.Resubmit sends
// each copy back and completes the original only after the copy is
// accepted.
func (m *Model) startResubmitJob(seqs []int64) tea.Cmd {
	if m.busy("resubmit") {
		return nil
	}
	entity := m.entity
	target := broker.ResubmitTarget(entity)
	// Where each is, as far as the pane knows: its sub-queue.
	subOf := make(map[int64]broker.SubQueue)
	for _, x := range m.panes[len(m.panes)-1].rows {
		subOf[x.SequenceNumber] = x.SubQueue
	}
	var ready []dlqItem
	var keys []heldKey
	var want []int64
	for _, s := range seqs {
		held := false
		for _, sub := range deadLetterQueues {
			k := heldKey{broker.SubQueueAddress(entity, sub), s}
			if h := m.held[k]; h != nil && !h.settling {
				h.settling = true
				ready = append(ready, dlqItem{k.address, h.msg})
				keys = append(keys, k)
				held = true
				break
			}
		}
		if !held {
			want = append(want, s)
		}
	}
	defer m.jobKeys(keys)
	c, timeout, n := m.client, m.opts.Timeout, m.opts.Concurrency
	title := fmt.Sprintf("resubmit %d message(s) to %s", len(seqs), target)
	return m.startJob(title, "resubmitted", len(seqs), func(ctx context.Context, report func(jobEvent)) {
		resubmit := func(it dlqItem) {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			err := broker.Resubmit(cctx, c, it.dlq, it.msg, target)
			k := heldKey{it.dlq, it.msg.SequenceNumber}
			report(jobEvent{ok: err == nil, err: err, label: fmt.Sprintf("sequence number %d", it.msg.SequenceNumber), key: &k})
		}
		broker.ForEach(ctx, n, ready, resubmit)
		if len(want) == 0 {
			return
		}
		if sl, ok := broker.SequenceLockerOf(c); ok {
			var mu sync.Mutex
			var unsupported []int64
			broker.ForEach(ctx, n, want, func(s int64) {
				it, err := lockOne(ctx, sl, entity, s, subOf, timeout)
				switch {
				case errors.Is(err, broker.ErrNotSupported):
					mu.Lock()
					unsupported = append(unsupported, s)
					mu.Unlock()
				case err != nil:
					report(jobEvent{err: err, label: fmt.Sprintf("sequence number %d", s)})
				default:
					resubmit(it)
				}
			})
			if want = unsupported; len(want) == 0 {
				return
			}
		}
		// Receive from the head of the sub-queue each was seen in, up to
		// the chosen ones; one the pane did not see is looked for in the
		// dead-letter queue, then in the transfer one.
		var inDL, inTDL []int64
		unknown := map[int64]bool{}
		for _, s := range want {
			switch sub, ok := subOf[s]; {
			case ok && sub == broker.SubQueueTransferDeadLetter:
				inTDL = append(inTDL, s)
			case !ok || sub == broker.SubQueueMain:
				unknown[s] = true
				fallthrough
			default:
				inDL = append(inDL, s)
			}
		}
		var missing []int64
		look := func(sub broker.SubQueue, ws []int64) []int64 {
			if len(ws) == 0 || ctx.Err() != nil {
				return ws
			}
			found, left, err := receiveUpTo(ctx, c, entity, sub, ws, timeout)
			broker.ForEach(ctx, n, found, resubmit)
			if err != nil {
				for _, s := range left {
					report(jobEvent{err: err, label: fmt.Sprintf("sequence number %d", s)})
				}
				return nil
			}
			return left
		}
		for _, s := range look(broker.SubQueueDeadLetter, inDL) {
			if unknown[s] {
				inTDL = append(inTDL, s)
			} else {
				missing = append(missing, s)
			}
		}
		missing = append(missing, look(broker.SubQueueTransferDeadLetter, inTDL)...)
		slices.Sort(missing)
		for _, s := range missing {
			err := broker.Errorf(broker.CodeMessageNotFound, "sequence number %d is not among the available messages of the dead-letter queues of %s (gone, or locked by another receiver)", s, entity)
			report(jobEvent{err: err, label: fmt.Sprintf("sequence number %d", s)})
		}
	})
}

// lockOne locks dead-lettered message s of entity by its sequence number,
// in the sub-queue the pane saw it in, or else in either.
func lockOne(ctx context.Context, sl broker.SequenceLocker, entity string, s int64, subOf map[int64]broker.SubQueue, timeout time.Duration) (dlqItem, error) {
	subs := deadLetterQueues[:]
	if sub, ok := subOf[s]; ok && sub != broker.SubQueueMain {
		subs = []broker.SubQueue{sub}
	}
	var err error
	for _, sub := range subs {
		addr := broker.SubQueueAddress(entity, sub)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		var got []*broker.Message
		got, err = sl.LockSequence(cctx, addr, []int64{s})
		cancel()
		if err == nil && len(got) == 1 {
			return dlqItem{addr, got[0]}, nil
		}
		if err == nil {
			err = broker.Errorf(broker.CodeMessageNotFound, "sequence number %d: nothing locked", s)
		}
		if !errors.Is(err, broker.ErrMessageNotFound) {
			return dlqItem{}, err
		}
	}
	return dlqItem{}, err
}

// receiveUpTo locks the messages of a dead-letter sub-queue of entity with
// the sequence numbers want, on an endpoint that can only receive from the
// head: it counts (by browsing) the messages up to the last of them,
// receives that many, and gives every other message it received back at
// once with broker.Release, before the caller resubmits what was found.
// It returns what it found, under lock, and the numbers it did not find.
func receiveUpTo(ctx context.Context, c broker.Client, entity string, sub broker.SubQueue, want []int64, timeout time.Duration) (found []dlqItem, left []int64, err error) {
	addr := broker.SubQueueAddress(entity, sub)
	last := slices.Max(want)
	wanted := make(map[int64]bool, len(want))
	for _, s := range want {
		wanted[s] = true
	}
	// How many messages are there up to the last chosen one?
	upTo := 0
	for from := int64(0); upTo < maxResubmitScan; {
		bctx, cancel := context.WithTimeout(ctx, timeout)
		page, err := c.Browse(bctx, broker.BrowseRequest{Entity: addr, FromSequence: from, Max: 256})
		cancel()
		if err != nil {
			if errors.Is(err, broker.ErrNotSupported) {
				upTo = maxResubmitScan // cannot count: take what it takes
				break
			}
			return nil, want, err
		}
		done := len(page) == 0
		for _, x := range page {
			if x.SequenceNumber > last {
				done = true
				break
			}
			upTo++
		}
		if done {
			break
		}
		from = page[len(page)-1].SequenceNumber + 1
	}
	var aside []dlqItem
	defer func() {
		// Give back what is not ours to resubmit, now, without counting a
		// delivery.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		for _, it := range aside {
			_ = c.Settle(rctx, broker.Settlement{Kind: broker.Release, Entity: it.dlq, Token: it.msg.LockToken})
		}
	}()
	taken := 0
	for len(wanted) > 0 && taken < max(upTo, len(want)) && ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		got, err := c.Receive(rctx, broker.ReceiveRequest{Entity: entity, SubQueue: sub, Mode: broker.PeekLock,
			Max: min(max(upTo, len(want))-taken, maxReceiveBatch)})
		cancel()
		if err != nil {
			return found, sortedKeys(wanted), err
		}
		if len(got) == 0 {
			break
		}
		taken += len(got)
		past := false
		for _, x := range got {
			if wanted[x.SequenceNumber] {
				delete(wanted, x.SequenceNumber)
				found = append(found, dlqItem{addr, x})
				continue
			}
			aside = append(aside, dlqItem{addr, x})
			past = past || x.SequenceNumber > last
		}
		if past {
			break // beyond the last chosen one: the rest are gone or locked
		}
	}
	return found, sortedKeys(wanted), nil
}

// maxReceiveBatch is the most messages one receive of receiveUpTo asks
// for.
const maxReceiveBatch = 500

// sortedKeys returns the keys of set in order.
func sortedKeys(set map[int64]bool) []int64 {
	out := make([]int64, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
