package broker

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// LockChosen locks the available messages of the queue or subscription
// entity (its main queue) with the sequence numbers seqs, touching no other
// message for long: by sequence number where the endpoint can
// (SequenceLocker), else received from the head up to the last of them, the
// others received on the way given back at once with Release (no delivery
// counted). It returns the messages locked, in sequence order, and the
// numbers it did not find (gone, locked by another receiver, deferred or
// scheduled). The error is that of a receive that failed; what was locked
// before it is returned too.
func LockChosen(ctx context.Context, c Client, entity string, seqs []int64, concurrency int, timeout time.Duration) (locked []LockedAt, missing []int64, err error) {
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	want := slices.Clone(seqs)
	slices.Sort(want)
	want = slices.Compact(want)
	if sl, ok := SequenceLockerOf(c); ok {
		var mu sync.Mutex
		var unsupported []int64
		ForEach(ctx, concurrency, want, func(s int64) {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			got, err := sl.LockSequence(cctx, entity, []int64{s})
			cancel()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && len(got) == 1:
				locked = append(locked, LockedAt{Address: entity, Msg: got[0]})
			case errors.Is(err, ErrNotSupported):
				unsupported = append(unsupported, s)
			default:
				missing = append(missing, s)
			}
		})
		slices.SortFunc(locked, func(a, b LockedAt) int { return int(a.Msg.SequenceNumber - b.Msg.SequenceNumber) })
		slices.Sort(missing)
		if want = unsupported; len(want) == 0 {
			return locked, missing, nil
		}
	}
	found, left, err := receiveUpTo(ctx, c, entity, SubQueueMain, want, timeout)
	locked = append(locked, found...)
	missing = append(missing, left...)
	slices.Sort(missing)
	return locked, missing, err
}
