package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// histCountingStore counts the history changes of the batches applied to
// the store it wraps (cancelled puts excluded).
type histCountingStore struct {
	store.Store
	ops atomic.Int64
}

func (s *histCountingStore) Apply(b *store.Batch) (store.Pending, error) {
	for _, op := range b.Hist {
		if op.Event != nil || op.Count > 0 || op.Hide {
			s.ops.Add(1)
		}
	}
	return s.Store.Apply(b)
}

// TestHistoryCostsNoWritesForADelivery: with history on, a message sent,
// delivered once and completed writes no history record at all (the send
// event is kept in the message's own record, the hand-out event goes with
// the completion), yet its history, read before the completion, has both
// events, also after a restart; and a history that outgrows its bound folds
// away that first event.
func TestHistoryCostsNoWritesForADelivery(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		st := &histCountingStore{Store: newStore()}
		f := newFixture(t, st)
		f.queue("q", broker.EntitySettings{LockDuration: time.Minute})
		f.send("q", msg("m1"))
		f.mustSettle(broker.Complete, "q", f.receiveOne("q"))
		if n := st.ops.Load(); n != 0 {
			t.Fatalf("send, receive and complete wrote %d history changes, want 0", n)
		}
		wantGone(t, f, st.Store, "q", 1)

		f.send("q", msg("m2"))
		f.receiveOne("q")
		wantKinds(t, f.history("q", 2), broker.EventSent, broker.EventLocked)
		if n := st.ops.Load(); n != 1 {
			t.Fatalf("%d history changes after reading a history, want 1 (the hand-out)", n)
		}
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		st2 := newStore()
		f = openFixture(t, st2, f.clock)
		wantKinds(t, f.history("q", 2), broker.EventSent, broker.EventLocked, broker.EventLockLost)
		f.mustSettle(broker.Complete, "q", f.receiveOne("q"))
		wantGone(t, f, st2, "q", 2)
	})
}
