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

// TestHistoryHandOutsWaitForTheirMessage: with either store, the hand-out
// of a message still locked is not written with another message's change
// (only to be deleted again when it completes): two messages handed out
// and completed one after the other write no history change at all.
func TestHistoryHandOutsWaitForTheirMessage(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		st := &histCountingStore{Store: newStore()}
		f := newFixture(t, st)
		f.queue("q", broker.EntitySettings{LockDuration: time.Minute})
		f.send("q", msg("m1"), msg("m2"))
		m1, m2 := f.receiveOne("q"), f.receiveOne("q")
		f.mustSettle(broker.Complete, "q", m1)
		if n := st.ops.Load(); n != 0 {
			t.Fatalf("completing m1 wrote %d history changes (m2's hand-out?), want 0", n)
		}
		f.mustSettle(broker.Complete, "q", m2)
		if n := st.ops.Load(); n != 0 {
			t.Fatalf("completing both wrote %d history changes, want 0", n)
		}
	})
}

// TestHistoryHeldEvents: the held events of hand-outs and renewals keep
// their order when a change of their message writes them, folding included;
// a completion cancels all of them and leaves no history behind; and more
// hand-outs than an entity holds (maxRiders) are written or dropped without
// losing the history of the messages still locked.
func TestHistoryHeldEvents(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		st := newStore()
		f := boundedHistoryFixture(t, st, 4)
		f.queue("q", broker.EntitySettings{LockDuration: time.Hour, MaxDeliveryCount: 100})
		renewed := func(m *broker.Message, n int) {
			for range n {
				if _, err := f.e.RenewLock(f.ctx, "q", m.LockToken); err != nil {
					t.Fatal(err)
				}
			}
		}
		f.send("q", msg("m1"), msg("m2"))
		m1, m2 := f.receiveOne("q"), f.receiveOne("q")
		renewed(m1, 6)
		renewed(m2, 6)
		f.mustSettle(broker.Complete, "q", m1) // cancels all seven held events
		f.mustSettle(broker.Abandon, "q", m2)  // writes them, then its own
		h := f.history("q", 2)
		if h.Folded != 5 {
			t.Fatalf("folded %d, want 5\n%s", h.Folded, dumpHistory(h))
		}
		wantKinds(t, h, broker.EventRenewed, broker.EventRenewed, broker.EventRenewed, broker.EventAbandoned)
		f.mustSettle(broker.Complete, "q", f.receiveOne("q"))
		wantGone(t, f, st, "q", 1)
		wantGone(t, f, st, "q", 2)

		const n = 3 * maxRiders
		f.sendN("q", n)
		var ms []*broker.Message
		for len(ms) < n {
			got := f.receive("q", 100)
			for _, m := range got {
				if m.SequenceNumber%3 != 0 {
					f.mustSettle(broker.Complete, "q", m)
				}
			}
			ms = append(ms, got...)
		}
		for _, m := range ms {
			if m.SequenceNumber%3 == 0 {
				wantKinds(t, f.history("q", m.SequenceNumber), broker.EventSent, broker.EventLocked)
				f.mustSettle(broker.Complete, "q", m)
			}
		}
		wantGone(t, f, st, "q", n+2)
	})
}
