package engine

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

func TestSequenceNumbersAndBrokerProperties(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{DefaultMessageTimeToLive: time.Hour})
		long := msg("long")
		long.TimeToLive = 2 * time.Hour // cut down to the entity default
		short := msg("short")
		short.TimeToLive = time.Minute
		f.send("q", msg("a"), long, short)
		f.send("q", msg("d"))
		ms := f.browse("q", broker.CategoryActive)
		if got, want := seqsOf(ms), []int64{1, 2, 3, 4}; !slices.Equal(got, want) {
			t.Fatalf("sequence numbers = %v, want %v", got, want)
		}
		for _, m := range ms {
			if !m.EnqueuedTime.Equal(t0) {
				t.Errorf("seq %d EnqueuedTime = %v, want %v", m.SequenceNumber, m.EnqueuedTime, t0)
			}
			if m.DeliveryCount != 1 || m.Locked() || m.State != broker.StateActive {
				t.Errorf("seq %d: delivery %d locked %v state %v, want 1 false Active", m.SequenceNumber, m.DeliveryCount, m.Locked(), m.State)
			}
		}
		if want := t0.Add(time.Hour); !ms[1].ExpiresAt.Equal(want) || ms[1].TimeToLive != time.Hour {
			t.Errorf("long: ExpiresAt %v TTL %v, want %v 1h", ms[1].ExpiresAt, ms[1].TimeToLive, want)
		}
		if want := t0.Add(time.Minute); !ms[2].ExpiresAt.Equal(want) {
			t.Errorf("short: ExpiresAt %v, want %v", ms[2].ExpiresAt, want)
		}
		if want := int64(len("body of a") + len("a")); ms[0].Size != want {
			t.Errorf("Size = %d, want %d", ms[0].Size, want)
		}
	})
}

func TestMaxTimeToLiveNeverExpires(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{}) // default TTL: MaxTimeToLive
	f.send("q", msg("a"))
	m := f.browse("q", broker.CategoryActive)[0]
	if !m.ExpiresAt.IsZero() || m.TimeToLive != broker.MaxTimeToLive {
		t.Fatalf("ExpiresAt %v TTL %v, want zero and MaxTimeToLive", m.ExpiresAt, m.TimeToLive)
	}
	f.advance(100 * 365 * 24 * time.Hour)
	f.wantCounts("q", broker.Counts{Active: 1})
}

func TestPeekLockExclusiveAndComplete(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: 30 * time.Second})
		f.sendN("q", 3)
		a := f.receiveOne("q")
		b := f.receiveOne("q")
		if a.SequenceNumber != 1 || b.SequenceNumber != 2 {
			t.Fatalf("received seqs %d, %d; want 1, 2", a.SequenceNumber, b.SequenceNumber)
		}
		if a.LockToken == b.LockToken || a.LockToken.IsZero() {
			t.Fatalf("lock tokens %v and %v must differ and be set", a.LockToken, b.LockToken)
		}
		if a.DeliveryCount != 1 {
			t.Fatalf("DeliveryCount at first hand-out = %d, want 1", a.DeliveryCount)
		}
		if want := t0.Add(30 * time.Second); !a.LockedUntil.Equal(want) {
			t.Fatalf("LockedUntil = %v, want %v", a.LockedUntil, want)
		}
		if string(a.Body) != "body of m1" || a.MessageID != "m1" {
			t.Fatalf("message = %q %q", a.MessageID, a.Body)
		}
		f.wantCounts("q", broker.Counts{Active: 1, Locked: 2})
		f.mustSettle(broker.Complete, "q", a)
		f.wantCounts("q", broker.Counts{Active: 1, Locked: 1})
		// Completing again is lock lost and touches nothing else.
		err := f.settle(broker.Complete, "q", a)
		if !errors.Is(err, broker.ErrLockLost) {
			t.Fatalf("second complete: %v, want lock lost", err)
		}
		wantCode(t, err, broker.CodeLockLost)
		f.wantCounts("q", broker.Counts{Active: 1, Locked: 1})
		locked := f.browse("q", broker.CategoryLocked)
		if len(locked) != 1 || locked[0].SequenceNumber != 2 || locked[0].LockToken != b.LockToken || !locked[0].LockedUntil.Equal(b.LockedUntil) {
			t.Fatalf("locked pane = %+v", locked)
		}
		// Peek never changes the delivery count.
		if locked[0].DeliveryCount != 1 {
			t.Fatalf("browsed delivery count = %d, want 1", locked[0].DeliveryCount)
		}
	})
}

func TestAbandonReturnsNearHeadWithProperties(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.sendN("q", 2)
		m := f.receiveOne("q")
		err := f.e.Settle(f.ctx, broker.Settlement{Kind: broker.Abandon, Entity: "q", Token: m.LockToken,
			PropertiesToModify: map[string]any{"retry": int32(1)}})
		if err != nil {
			t.Fatal(err)
		}
		again := f.receiveOne("q")
		if again.SequenceNumber != 1 || again.DeliveryCount != 2 {
			t.Fatalf("after abandon got seq %d delivery %d; want 1, 2", again.SequenceNumber, again.DeliveryCount)
		}
		if again.ApplicationProperties["retry"] != int32(1) {
			t.Fatalf("properties = %v, want retry=1", again.ApplicationProperties)
		}
		if !errors.Is(f.settle(broker.Abandon, "q", m), broker.ErrLockLost) {
			t.Fatal("abandon with the old token must be lock lost")
		}
	})
}

func TestDeadLetterKeepsSequenceNumber(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.sendN("q", 3)
		f.receiveOne("q")
		m := f.receiveOne("q")
		err := f.e.Settle(f.ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "q", Token: m.LockToken,
			Reason: "bad", Description: "cannot parse", PropertiesToModify: map[string]any{"x": "y"}})
		if err != nil {
			t.Fatal(err)
		}
		f.wantCounts("q", broker.Counts{Active: 1, Locked: 1, DeadLettered: 1})
		dl := f.browse("q", broker.CategoryDeadLettered)
		if len(dl) != 1 || dl[0].SequenceNumber != 2 {
			t.Fatalf("dead-lettered = %v", seqsOf(dl))
		}
		d := dl[0]
		if d.DeadLetterReason() != "bad" || d.DeadLetterErrorDescription() != "cannot parse" || d.ApplicationProperties["x"] != "y" {
			t.Fatalf("dead-letter properties = %v", d.ApplicationProperties)
		}
		if d.DeadLetterSource != "" {
			t.Fatalf("DeadLetterSource = %q, want empty (not forwarded)", d.DeadLetterSource)
		}
		// Receive from the dead-letter sub-queue and complete it there.
		got, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: "q" + broker.DeadLetterSuffix, Max: 5})
		if err != nil || len(got) != 1 || got[0].SequenceNumber != 2 {
			t.Fatalf("receive from DLQ = %v, %v", seqsOf(got), err)
		}
		if !errors.Is(f.settle(broker.Complete, "q", got[0]), broker.ErrLockLost) {
			t.Fatal("a DLQ lock settled on the main queue must be lock lost")
		}
		f.mustSettle(broker.Complete, "q/$DeadLetterQueue", got[0])
		f.wantCounts("q", broker.Counts{Active: 1, Locked: 1})
	})
}

func TestDeferAndReceiveDeferred(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.sendN("q", 2)
		m := f.receiveOne("q")
		f.mustSettle(broker.Defer, "q", m)
		f.wantCounts("q", broker.Counts{Active: 1, Deferred: 1})
		// Out of normal delivery.
		next := f.receive("q", 10)
		if got := seqsOf(next); !slices.Equal(got, []int64{2}) {
			t.Fatalf("normal receive after defer = %v, want [2]", got)
		}
		d := f.browse("q", broker.CategoryDeferred)
		if len(d) != 1 || d[0].State != broker.StateDeferred {
			t.Fatalf("deferred pane = %+v", d)
		}
		_, err := f.e.ReceiveDeferred(f.ctx, "q", []int64{1, 99})
		wantCode(t, err, broker.CodeMessageNotFound)
		f.wantCounts("q", broker.Counts{Locked: 1, Deferred: 1})
		got, err := f.e.ReceiveDeferred(f.ctx, "q", []int64{1})
		if err != nil || len(got) != 1 {
			t.Fatalf("receive deferred: %v %v", got, err)
		}
		// The deferral counted a delivery: receiving the message by
		// sequence number shows it, as Service Bus does.
		if got[0].State != broker.StateDeferred || got[0].DeliveryCount != 2 || got[0].LockToken.IsZero() {
			t.Fatalf("deferred hand-out: state %v delivery %d token %v", got[0].State, got[0].DeliveryCount, got[0].LockToken)
		}
		// Abandoned, it stays deferred.
		f.mustSettle(broker.Abandon, "q", got[0])
		f.wantCounts("q", broker.Counts{Locked: 1, Deferred: 1})
		got, _ = f.e.ReceiveDeferred(f.ctx, "q", []int64{1})
		f.mustSettle(broker.Complete, "q", got[0])
		f.wantCounts("q", broker.Counts{Locked: 1})
	})
}

func TestRenewLock(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: 10 * time.Second})
		f.sendN("q", 1)
		m := f.receiveOne("q")
		f.advance(8 * time.Second)
		until, err := f.e.RenewLock(f.ctx, "q", m.LockToken)
		if err != nil {
			t.Fatal(err)
		}
		if want := t0.Add(18 * time.Second); !until.Equal(want) {
			t.Fatalf("renewed until %v, want %v", until, want)
		}
		f.advance(9 * time.Second) // 17s: still locked thanks to the renewal
		f.wantCounts("q", broker.Counts{Locked: 1})
		f.advance(time.Second) // 18s: expired
		f.wantCounts("q", broker.Counts{Active: 1})
		_, err = f.e.RenewLock(f.ctx, "q", m.LockToken)
		wantCode(t, err, broker.CodeLockLost)
	})
}
