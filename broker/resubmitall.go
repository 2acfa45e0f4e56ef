package broker

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ResubmitOptions tune ResubmitFrom.
type ResubmitOptions struct {
	// SubQueues are the dead-letter sub-queues to resubmit from, in this
	// order; nil means the dead-letter queue, then the transfer dead-letter
	// queue.
	SubQueues []SubQueue
	// Only, when not nil, limits the work to these messages: sequence
	// numbers with the sub-queue each was seen in. A sub-queue is left as
	// soon as none of its messages remain to be found.
	Only map[int64]SubQueue
	// Max stops the work after this many resubmits were attempted (0: no
	// limit).
	Max int
	// Concurrency bounds the resubmits in flight (0: 8).
	Concurrency int
	// Timeout bounds each broker call (0: 15 s).
	Timeout time.Duration
	// Batch is the most messages one receive asks for (0: 32).
	Batch int
	// Now, when set, is the clock by which the messages set aside (received
	// on the way, not to be resubmitted) have their locks renewed before
	// they run out, so that a long run does not let them expire, which
	// would count as a failed delivery; nil renews nothing.
	Now func() time.Time
}

// aside is a message received on the way and kept locked until the end, so
// that it is not received again; lockFor is how long its lock lasted.
type aside struct {
	dlq     string
	msg     *Message
	lockFor time.Duration
}

// ResubmitFrom resubmits the messages of entity's dead-letter sub-queues one
// by one with Resubmit (the copy accepted before the original is
// completed), receiving them under peek-lock in batches, until the
// sub-queues are empty, the messages of o.Only are found, o.Max is reached
// or ctx ends. The copies are sent in the order of the sub-queues and of
// their sequence numbers, one after the other; completing the originals
// overlaps the sends, o.Concurrency at once. report is called once for
// every message attempted, with its outcome, one call at a time. A message
// whose resubmit failed is given back, and when it comes
// again it is kept locked until the end with the others set aside; at the
// end every message set aside is released unchanged (its delivery count
// stays). The error is that of a receive that failed, which ends the work.
func ResubmitFrom(ctx context.Context, c Client, entity string, o ResubmitOptions, report func(dlq string, m *Message, err error)) error {
	subs := o.SubQueues
	if subs == nil {
		subs = []SubQueue{SubQueueDeadLetter, SubQueueTransferDeadLetter}
	}
	var reportMu sync.Mutex
	n := o.Concurrency
	if n <= 0 {
		n = 8
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	batch := o.Batch
	if batch <= 0 {
		batch = 32
	}
	target := ResubmitTarget(entity)
	attempted := make(map[int64]bool)
	seen := make(map[int64]bool) // received at least once
	var kept []aside
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		for _, a := range kept {
			_ = c.Settle(rctx, Settlement{Kind: Release, Entity: a.dlq, Token: a.msg.LockToken})
		}
	}()
	left := make(map[SubQueue]int)
	for _, sub := range o.Only {
		left[sub]++
	}
	done := 0
	for _, sub := range subs {
		from := SubQueueAddress(entity, sub)
		for ctx.Err() == nil && (o.Max == 0 || done < o.Max) && (o.Only == nil || left[sub] > 0) {
			want := batch
			if o.Max > 0 {
				want = min(want, o.Max-done)
			}
			rctx, cancel := context.WithTimeout(ctx, timeout)
			got, err := c.Receive(rctx, ReceiveRequest{Entity: entity, SubQueue: sub, Mode: PeekLock, Max: want})
			cancel()
			if err != nil {
				return fmt.Errorf("receive from %s: %w", from, err)
			}
			if len(got) == 0 {
				break
			}
			now := time.Time{}
			if o.Now != nil {
				now = o.Now()
			}
			var fresh []LockedAt
			news := 0
			for _, m := range got {
				_, wanted := o.Only[m.SequenceNumber]
				if !seen[m.SequenceNumber] {
					seen[m.SequenceNumber] = true
					news++
				}
				if attempted[m.SequenceNumber] || (o.Only != nil && !wanted) {
					kept = append(kept, aside{dlq: from, msg: m, lockFor: m.LockedUntil.Sub(now)})
					continue
				}
				attempted[m.SequenceNumber] = true
				if wanted {
					left[sub]--
				}
				fresh = append(fresh, LockedAt{Address: from, Msg: m})
			}
			if news == 0 {
				// Only messages seen before: their locks ran out, and this
				// sub-queue has nothing new to give.
				break
			}
			done += len(fresh)
			resubmitInOrder(ctx, c, fresh, target, n, timeout, func(it LockedAt, err error) {
				reportMu.Lock()
				defer reportMu.Unlock()
				report(from, it.Msg, err)
			})
			if o.Now != nil {
				renewAside(ctx, c, kept, o.Now(), timeout)
			}
		}
	}
	return nil
}

// renewAside renews the locks of the messages set aside that have used half
// of their lock duration.
func renewAside(ctx context.Context, c Client, kept []aside, now time.Time, timeout time.Duration) {
	for i := range kept {
		a := &kept[i]
		if a.lockFor <= 0 || a.msg.LockedUntil.Sub(now) > a.lockFor/2 {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		until, err := c.RenewLock(rctx, a.dlq, a.msg.LockToken)
		cancel()
		if err == nil {
			m := *a.msg
			m.LockedUntil = until
			a.msg = &m
		}
	}
}
