package cli

import (
	"context"
	"math"
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgfilter"
)

// readPage is the most messages one browse of peek, export and tail asks
// for.
const readPage = 1000

// page is one browse's worth of messages, or the error that ended reading.
type page struct {
	msgs []*broker.Message
	err  error
}

// readMessages browses the messages of req from req.FromSequence that pass
// f, at most max (0: all), one page ahead of the caller: it returns a
// channel of pages that closes at the end. Browsing never locks a message
// nor changes its delivery count.
func readMessages(ctx context.Context, c broker.Client, req broker.BrowseRequest, f msgfilter.Filter, max int) <-chan page {
	out := make(chan page, 2)
	go func() {
		defer close(out)
		from, got := req.FromSequence, 0
		for ctx.Err() == nil {
			want := readPage
			if max > 0 {
				want = min(want, max-got)
			}
			r := req
			r.FromSequence, r.Max = from, want
			var msgs []*broker.Message
			var err error
			if f.Active() {
				msgs, _, _, err = msgfilter.Browse(ctx, c, r, f, math.MaxInt)
			} else {
				msgs, err = c.Browse(ctx, r)
			}
			if err != nil {
				out <- page{err: err}
				return
			}
			if len(msgs) > 0 {
				select {
				case out <- page{msgs: msgs}:
				case <-ctx.Done():
					return
				}
				got += len(msgs)
				from = msgs[len(msgs)-1].SequenceNumber + 1
			}
			if len(msgs) < want || (max > 0 && got >= max) {
				return
			}
		}
	}()
	return out
}

// countOf returns how many messages req reads, from the entity's counts,
// or 0 when they are unknown.
func countOf(ctx context.Context, c broker.Client, req broker.BrowseRequest) int64 {
	list, err := c.Entities(ctx)
	if err != nil {
		return 0
	}
	path, sub := broker.SplitAddress(req.Entity)
	for _, e := range list {
		if !strings.EqualFold(e.Path, path) {
			continue
		}
		switch sub {
		case broker.SubQueueDeadLetter:
			return e.Counts.DeadLettered
		case broker.SubQueueTransferDeadLetter:
			return e.Counts.TransferDeadLettered
		}
		return e.Counts.Count(req.Category)
	}
	return 0
}
