package broker

import (
	"context"
	"sync"
)

// ForEach runs fn on every item with at most n at once (at least one), and
// returns when all that started are done. When ctx ends it starts no more.
// Bulk work (resubmits, settlements of many messages) uses it so that it
// never fans out without bound.
func ForEach[T any](ctx context.Context, n int, items []T, fn func(T)) {
	sem := make(chan struct{}, max(1, n))
	var wg sync.WaitGroup
	for _, it := range items {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(it)
		}()
	}
	wg.Wait()
}
