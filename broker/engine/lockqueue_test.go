package engine

import (
	"slices"
	"testing"
)

// TestLockQueueKeepsExpiryOrder checks that the lock queue hands out its
// locks in expiry order when some expire before locks taken earlier (the
// clock stepped back, the LockDuration was shortened), and that a deleted
// lock, in order or not, is gone.
func TestLockQueueKeepsExpiryOrder(t *testing.T) {
	q := newLockQueue()
	ats := []int64{10, 20, 15, 30, 5, 30, 40, 12}
	xs := make([]*entry, len(ats))
	for i, at := range ats {
		xs[i] = &entry{seq: int64(i + 1), at: at}
		q.Set(xs[i])
	}
	q.Delete(xs[3]) // 30, in order
	q.Delete(xs[7]) // 12, out of order
	if q.Len() != 6 {
		t.Fatalf("Len = %d, want 6", q.Len())
	}
	var got []int64
	for {
		x, ok := q.Min()
		if !ok {
			break
		}
		got = append(got, x.at)
		q.Delete(x)
	}
	if want := []int64{5, 10, 15, 20, 30, 40}; !slices.Equal(got, want) {
		t.Fatalf("expiries taken in the order %v, want %v", got, want)
	}
	if q.Len() != 0 {
		t.Fatalf("Len = %d after taking every lock", q.Len())
	}
}
