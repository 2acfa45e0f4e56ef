package engine

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

func TestLockExpiryMakesMessageAvailable(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: 30 * time.Second, MaxDeliveryCount: 5})
		f.sendN("q", 2)
		m := f.receiveOne("q")
		f.advance(30*time.Second - time.Nanosecond)
		f.wantCounts("q", broker.Counts{Active: 1, Locked: 1})
		f.mustSettle(broker.Complete, "q", f.receiveOne("q")) // seq 2 still deliverable meanwhile
		f.advance(time.Nanosecond)
		f.wantCounts("q", broker.Counts{Active: 1})
		err := f.settle(broker.Complete, "q", m)
		wantCode(t, err, broker.CodeLockLost)
		again := f.receiveOne("q")
		if again.SequenceNumber != 1 || again.DeliveryCount != 2 {
			t.Fatalf("after expiry got seq %d delivery %d; want 1, 2", again.SequenceNumber, again.DeliveryCount)
		}
	})
}

func TestLockExpiryWithoutTick(t *testing.T) {
	// Lazy processing: the next operation on the entity sees the expiry even
	// when nobody called Tick.
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{LockDuration: time.Second})
	f.sendN("q", 1)
	m := f.receiveOne("q")
	f.clock.Advance(time.Second)
	if err := f.settle(broker.Complete, "q", m); !errors.Is(err, broker.ErrLockLost) {
		t.Fatalf("complete after expiry: %v, want lock lost", err)
	}
}

func TestMaxDeliveryCountDeadLetters(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: 10 * time.Second, MaxDeliveryCount: 3})
		f.sendN("q", 1)
		// Delivery 1 expires, delivery 2 is abandoned, delivery 3 expires:
		// the third failed delivery reaches the maximum, so it goes to the
		// DLQ (where the SDKs show DeliveryCount 4: three failures plus one).
		if m := f.receiveOne("q"); m.DeliveryCount != 1 {
			t.Fatalf("first delivery count = %d", m.DeliveryCount)
		}
		f.advance(10 * time.Second)
		f.mustSettle(broker.Abandon, "q", f.receiveOne("q"))
		if m := f.receiveOne("q"); m.DeliveryCount != 3 {
			t.Fatalf("third delivery count = %d", m.DeliveryCount)
		}
		f.wantCounts("q", broker.Counts{Locked: 1})
		f.advance(10 * time.Second)
		f.wantCounts("q", broker.Counts{DeadLettered: 1})
		dl := f.browse("q", broker.CategoryDeadLettered)
		if len(dl) != 1 || dl[0].SequenceNumber != 1 || dl[0].DeliveryCount != 4 {
			t.Fatalf("dead-lettered = %+v", dl)
		}
		if dl[0].DeadLetterReason() != broker.ReasonMaxDeliveryCountExceeded {
			t.Fatalf("reason = %q", dl[0].DeadLetterReason())
		}
		if want := "Message could not be consumed after 3 delivery attempts."; dl[0].DeadLetterErrorDescription() != want {
			t.Fatalf("description = %q", dl[0].DeadLetterErrorDescription())
		}
		if len(f.receive("q", 1)) != 0 {
			t.Fatal("the main queue must be empty")
		}
	})
}

func TestAbandonAtMaxDeliveryDeadLetters(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{MaxDeliveryCount: 1})
	f.sendN("q", 1)
	f.mustSettle(broker.Abandon, "q", f.receiveOne("q"))
	f.wantCounts("q", broker.Counts{DeadLettered: 1})
}

func TestTimeToLive(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("drop", broker.EntitySettings{DefaultMessageTimeToLive: time.Minute})
		f.queue("dlq", broker.EntitySettings{DefaultMessageTimeToLive: time.Minute, DeadLetteringOnMessageExpiration: true})
		for _, q := range []string{"drop", "dlq"} {
			f.sendN(q, 2)
		}
		f.advance(time.Minute - time.Nanosecond)
		f.wantCounts("drop", broker.Counts{Active: 2})
		f.advance(time.Nanosecond)
		f.wantCounts("drop", broker.Counts{})
		f.wantCounts("dlq", broker.Counts{DeadLettered: 2})
		dl := f.browse("dlq", broker.CategoryDeadLettered)
		if dl[0].DeadLetterReason() != broker.ReasonTTLExpired || dl[1].SequenceNumber != 2 {
			t.Fatalf("dead-lettered: reason %q seqs %v", dl[0].DeadLetterReason(), seqsOf(dl))
		}
		// Dead-lettered messages do not expire again.
		f.advance(time.Hour)
		f.wantCounts("dlq", broker.Counts{DeadLettered: 2})
	})
}

func TestExpiredNeverDeliveredEvenWithoutSweep(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{DefaultMessageTimeToLive: time.Minute})
	f.sendN("q", 1)
	f.clock.Advance(time.Minute) // no Tick: the receive itself must check
	if ms := f.receive("q", 1); len(ms) != 0 {
		t.Fatalf("received an expired message: %v", seqsOf(ms))
	}
	// Also when the expiry index is bypassed: the receive checks the message.
	f2 := newFixture(t, store.NewMemory())
	f2.queue("q", broker.EntitySettings{DefaultMessageTimeToLive: time.Minute})
	f2.sendN("q", 1)
	en, _, _ := f2.e.lookup("q")
	en.mu.Lock()
	x, _ := en.ttl.Min()
	en.ttl.Delete(x)
	en.mu.Unlock()
	f2.clock.Advance(time.Minute)
	if ms := f2.receive("q", 1); len(ms) != 0 {
		t.Fatalf("received an expired message: %v", seqsOf(ms))
	}
	f2.wantCounts("q", broker.Counts{})
}

func TestLockedMessagePastTTLSettlesThenExpires(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{DefaultMessageTimeToLive: time.Minute, LockDuration: 5 * time.Minute,
			DeadLetteringOnMessageExpiration: true})
		f.sendN("q", 2)
		a := f.receiveOne("q")
		b := f.receiveOne("q")
		f.advance(2 * time.Minute) // both past TTL, both still locked
		f.wantCounts("q", broker.Counts{Locked: 2})
		f.mustSettle(broker.Complete, "q", a) // settles normally
		f.mustSettle(broker.Abandon, "q", b)  // released: expires now
		f.wantCounts("q", broker.Counts{DeadLettered: 1})
		if r := f.browse("q", broker.CategoryDeadLettered)[0].DeadLetterReason(); r != broker.ReasonTTLExpired {
			t.Fatalf("reason = %q", r)
		}
	})
}

// TestDropOwnerKeepsMessageLocks: a connection that goes away leaves its
// message locks in place until they expire or are settled by lock token
// from elsewhere (backup settlement); the expiry is a failed delivery.
func TestDropOwnerKeepsMessageLocks(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: 10 * time.Second, MaxDeliveryCount: 2})
		f.sendN("q", 3)
		ctx := context.Background()
		mine, err := f.e.ReceiveAs(ctx, 7, broker.ReceiveRequest{Entity: "q", Max: 2})
		if err != nil || len(mine) != 2 {
			t.Fatal(len(mine), err)
		}
		other, _ := f.e.ReceiveAs(ctx, 8, broker.ReceiveRequest{Entity: "q", Max: 1})
		f.e.DropOwner(7)
		f.wantCounts("q", broker.Counts{Locked: 3})
		// Settled by token from another owner after the first went away.
		f.mustSettle(broker.Complete, "q", mine[0])
		f.mustSettle(broker.Complete, "q", other[0])
		// The other lock expires: one failed delivery.
		f.advance(10 * time.Second)
		f.wantCounts("q", broker.Counts{Active: 1})
		again, _ := f.e.ReceiveAs(ctx, 9, broker.ReceiveRequest{Entity: "q", Max: 1})
		if again[0].SequenceNumber != 2 || again[0].DeliveryCount != 2 {
			t.Fatalf("redelivery: seq %d count %d, want 2 2", again[0].SequenceNumber, again[0].DeliveryCount)
		}
		f.e.DropOwner(9)
		f.wantCounts("q", broker.Counts{Locked: 1})
		f.advance(10 * time.Second) // the second failure reaches the max
		f.wantCounts("q", broker.Counts{DeadLettered: 1})
	})
}

func TestUpdateEntityLosesLocks(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: time.Minute})
		f.sendN("q", 2)
		a := f.receiveOne("q")
		err := f.e.UpdateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, Settings: broker.EntitySettings{LockDuration: 2 * time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(f.settle(broker.Complete, "q", a), broker.ErrLockLost) {
			t.Fatal("settling a lock taken before the update must fail")
		}
		f.wantCounts("q", broker.Counts{Active: 2})
		b := f.receiveOne("q")
		if want := t0.Add(2 * time.Minute); b.SequenceNumber != 1 || !b.LockedUntil.Equal(want) {
			t.Fatalf("after update: seq %d until %v, want 1 %v", b.SequenceNumber, b.LockedUntil, want)
		}
		ent, _ := f.e.Entity(f.ctx, "q")
		if ent.Settings.LockDuration != 2*time.Minute || ent.Settings.MaxDeliveryCount != broker.DefaultMaxDelivery {
			t.Fatalf("settings = %+v", ent.Settings)
		}
	})
}

func TestPurge(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.sendN("q", 5)
		locked := f.receiveOne("q")
		f.mustSettle(broker.Defer, "q", f.receiveOne("q"))
		dl := f.receiveOne("q")
		f.mustSettle(broker.DeadLetter, "q", dl)
		if _, err := f.e.Schedule(f.ctx, "q", t0.Add(time.Hour), []*broker.Message{msg("s")}); err != nil {
			t.Fatal(err)
		}
		f.wantCounts("q", broker.Counts{Active: 2, Locked: 1, Deferred: 1, Scheduled: 1, DeadLettered: 1})
		n, err := f.e.Purge(f.ctx, "q", broker.SubQueueMain)
		if err != nil || n != 5 {
			t.Fatalf("purge = %d, %v; want 5", n, err)
		}
		f.wantCounts("q", broker.Counts{DeadLettered: 1})
		if !errors.Is(f.settle(broker.Complete, "q", locked), broker.ErrLockLost) {
			t.Fatal("a purged message's lock must be lost")
		}
		n, err = f.e.Purge(f.ctx, "q/$DeadLetterQueue", broker.SubQueueMain)
		if err != nil || n != 1 {
			t.Fatalf("purge DLQ = %d, %v; want 1", n, err)
		}
		f.wantCounts("q", broker.Counts{})
		if c := f.counts("q"); c.SizeBytes != 0 {
			t.Fatalf("size after purge = %d", c.SizeBytes)
		}
		// Sequence numbers go on.
		f.sendN("q", 1)
		if got := seqsOf(f.browse("q", broker.CategoryActive)); !slices.Equal(got, []int64{7}) {
			t.Fatalf("seq after purge = %v, want [7]", got)
		}
	})
}
