package remote

import (
	"context"
	"fmt"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// purgeBatch is how many messages one receive of a purge asks for, and
// purgeQuiet how long an entity must have nothing to hand over for the purge
// to end.
const (
	purgeBatch = 256
	purgeQuiet = 500 * time.Millisecond
)

// Purge removes the messages of an entity's main queue or of one of its
// sub-queues by receiving them in receive-and-delete mode until none is
// left, at most Config.PurgeLimit of them. On Service Bus it then removes
// what receiving cannot reach: deferred messages (received by sequence
// number and completed) and scheduled ones (cancelled), as far as a browse
// finds them. It returns how many it removed; when the limit or ctx stops
// it, the error says so and the count is still right.
func (c *Client) Purge(ctx context.Context, entity string, sub broker.SubQueue) (int64, error) {
	if entity == "" {
		return 0, broker.Errorf(broker.CodeInvalid, "purge: no entity given")
	}
	var n int64
	for n < c.cfg.PurgeLimit {
		if err := ctx.Err(); err != nil {
			return n, mapErr(err, fmt.Sprintf("purge (after %d messages)", n), entity)
		}
		batch := purgeBatch
		if left := c.cfg.PurgeLimit - n; left < int64(batch) {
			batch = int(left)
		}
		msgs, err := c.Receive(ctx, broker.ReceiveRequest{Entity: entity, SubQueue: sub, Mode: broker.ReceiveAndDelete, Max: batch, MaxWait: purgeQuiet})
		n += int64(len(msgs))
		if err != nil {
			return n, err
		}
		if len(msgs) == 0 {
			break
		}
	}
	if n >= c.cfg.PurgeLimit {
		return n, &broker.Error{Code: broker.CodeTimeout, Entity: entity,
			Message: fmt.Sprintf("purge stopped after %d messages (the limit); run it again to remove more", n)}
	}
	if !c.cfg.serviceBus() {
		return n, nil
	}
	path, s := broker.SplitAddress(entity)
	if s != broker.SubQueueMain || sub != broker.SubQueueMain {
		return n, nil // the dead-letter sub-queues have no scheduled messages; deferred ones are rare and left
	}
	removed, err := c.purgeDeferredAndScheduled(ctx, path)
	return n + removed, err
}

// purgeDeferredAndScheduled removes the deferred and scheduled messages a
// browse finds.
func (c *Client) purgeDeferredAndScheduled(ctx context.Context, path string) (int64, error) {
	var n int64
	for {
		msgs, err := c.Browse(ctx, broker.BrowseRequest{Entity: path, Category: broker.CategoryScheduled, Max: purgeBatch})
		if err != nil || len(msgs) == 0 {
			if err != nil {
				return n, err
			}
			break
		}
		seqs := make([]int64, len(msgs))
		for i, m := range msgs {
			seqs[i] = m.SequenceNumber
		}
		if err := c.CancelScheduled(ctx, path, seqs); err != nil {
			return n, err
		}
		n += int64(len(seqs))
	}
	for {
		msgs, err := c.Browse(ctx, broker.BrowseRequest{Entity: path, Category: broker.CategoryDeferred, Max: 64})
		if err != nil || len(msgs) == 0 {
			if err != nil {
				return n, err
			}
			break
		}
		seqs := make([]int64, len(msgs))
		for i, m := range msgs {
			seqs[i] = m.SequenceNumber
		}
		locked, err := c.ReceiveDeferred(ctx, path, seqs)
		if err != nil {
			return n, err
		}
		for _, m := range locked {
			if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: path, Token: m.LockToken}); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
