package broker

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// resubmitInOrder resubmits the locked messages its (as Resubmit does) so
// that their copies reach target in the order of their sequence numbers:
// each copy is sent only once the one before was accepted, whatever n; the
// completes of the originals overlap the sends that follow, at most n at
// once. done is called once for every message that was attempted, with its
// outcome (from several goroutines: the caller serialises). When ctx ends
// no further copy is sent; an original whose copy was accepted is still
// completed, so that an interruption leaves no duplicate it can avoid.
func resubmitInOrder(ctx context.Context, c Client, its []LockedAt, target string, n int, timeout time.Duration, done func(LockedAt, error)) {
	its = slices.Clone(its)
	slices.SortStableFunc(its, func(a, b LockedAt) int {
		return cmp.Compare(a.Msg.SequenceNumber, b.Msg.SequenceNumber)
	})
	sem := make(chan struct{}, max(1, n))
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, it := range its {
		if ctx.Err() != nil {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, timeout)
		err := sendCopy(sctx, c, it.Address, it.Msg, target)
		cancel()
		if err != nil {
			done(it, err)
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
			defer cancel()
			done(it, completeOriginal(cctx, c, it.Address, it.Msg, target))
		}()
	}
}
