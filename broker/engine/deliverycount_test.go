package engine

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// The rules of spec §3 on DeliveryCount: it counts failed deliveries
// (abandon, lock expiry, lock loss) and clients see it plus one.

func TestReleaseIsNotAFailedDelivery(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxDeliveryCount: 2})
		f.sendN("q", 1)
		// The SDK's receive loop releases what arrives after a receive
		// call returned: ten times over, the message stays deliverable.
		for range 10 {
			f.mustSettle(broker.Release, "q", f.receiveOne("q"))
		}
		m := f.receiveOne("q")
		if m.DeliveryCount != 1 {
			t.Fatalf("after ten releases: DeliveryCount %d, want 1", m.DeliveryCount)
		}
		f.mustSettle(broker.Abandon, "q", m)
		if m := f.receiveOne("q"); m.DeliveryCount != 2 {
			t.Fatalf("after an abandon: DeliveryCount %d, want 2", m.DeliveryCount)
		}
		f.wantCounts("q", broker.Counts{Locked: 1})
	})
}

func TestFailedDeliveriesCount(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: 10 * time.Second, MaxDeliveryCount: 10})
		f.sendN("q", 1)
		if m := f.receiveOne("q"); m.DeliveryCount != 1 {
			t.Fatalf("first delivery: %d, want 1", m.DeliveryCount)
		}
		f.advance(10 * time.Second) // expiry counts
		if m := f.browse("q", broker.CategoryActive)[0]; m.DeliveryCount != 2 {
			t.Fatalf("peek after an expiry: %d, want 2", m.DeliveryCount)
		}
		f.mustSettle(broker.Abandon, "q", f.receiveOne("q")) // abandon counts
		f.receiveOne("q")
		// An entity change loses the lock: that counts too.
		if err := f.e.UpdateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue,
			Settings: broker.EntitySettings{LockDuration: 20 * time.Second, MaxDeliveryCount: 10}}); err != nil {
			t.Fatal(err)
		}
		if m := f.receiveOne("q"); m.DeliveryCount != 4 {
			t.Fatalf("after expiry, abandon and loss: %d, want 4", m.DeliveryCount)
		}
	})
}

func TestDeadLetterDeliveriesNeverCount(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: 10 * time.Second, MaxDeliveryCount: 1})
		f.sendN("q", 1)
		f.mustSettle(broker.DeadLetter, "q", f.receiveOne("q"))
		dlq := "q/$DeadLetterQueue"
		f.mustSettle(broker.Abandon, dlq, f.receiveOne(dlq))
		f.receiveOne(dlq)
		f.advance(10 * time.Second)
		m := f.receiveOne(dlq)
		if m.DeliveryCount != 1 {
			t.Fatalf("dead-letter sub-queue after abandon and expiry: %d, want 1", m.DeliveryCount)
		}
		f.wantCounts("q", broker.Counts{DeadLettered: 1})
	})
}

// TestDeferredDeliveryCount follows the JavaScript SDK's live tests
// (deferredMessage.spec.ts: header delivery-count 0, then 1 after defer and
// receive-deferred, then 2 after abandoning or deferring it again and
// receiving it again; 1 in the dead-letter sub-queue) and the Go SDK's
// (TestDeferredMessages/Abandon: a peek after abandoning the received
// deferred message shows one more). The engine shows the count plus one.
func TestDeferredDeliveryCount(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxDeliveryCount: 10})
		receiveDeferred := func(seq int64, want uint32) *broker.Message {
			t.Helper()
			got, err := f.e.ReceiveDeferred(f.ctx, "q", []int64{seq})
			if err != nil || len(got) != 1 || got[0].DeliveryCount != want {
				t.Fatalf("receive deferred %d: %v, %v; want DeliveryCount %d", seq, got, err, want)
			}
			return got[0]
		}
		f.sendN("q", 3)
		for _, then := range []broker.SettleKind{broker.Abandon, broker.Defer, broker.DeadLetter} {
			m := f.receiveOne("q")
			if m.DeliveryCount != 1 {
				t.Fatalf("first delivery: DeliveryCount %d, want 1", m.DeliveryCount)
			}
			f.mustSettle(broker.Defer, "q", m)
			if p := f.browse("q", broker.CategoryDeferred); len(p) != 1 || p[0].DeliveryCount != 2 {
				t.Fatalf("peek after the deferral: %+v", p)
			}
			d := receiveDeferred(m.SequenceNumber, 2)
			f.mustSettle(then, "q", d)
			if then == broker.DeadLetter {
				dlq := "q/$DeadLetterQueue"
				if got := f.receiveOne(dlq); got.DeliveryCount != 2 {
					t.Fatalf("dead-lettered deferred message: DeliveryCount %d, want 2", got.DeliveryCount)
				}
				continue
			}
			if p := f.browse("q", broker.CategoryDeferred); len(p) != 1 || p[0].DeliveryCount != 3 {
				t.Fatalf("peek after %s of the received deferred message: %+v", then, p)
			}
			f.mustSettle(broker.Complete, "q", receiveDeferred(m.SequenceNumber, 3))
		}
		f.wantCounts("q", broker.Counts{DeadLettered: 1})
	})
}

// TestDeferralNeverDeadLetters: deferring counts, but only a failed
// delivery moves a message past MaxDeliveryCount to the dead-letter
// sub-queue, also after a restart.
func TestDeferralNeverDeadLetters(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxDeliveryCount: 2})
		f.sendN("q", 1)
		m := f.receiveOne("q")
		f.mustSettle(broker.Defer, "q", m)
		got, err := f.e.ReceiveDeferred(f.ctx, "q", []int64{m.SequenceNumber})
		if err != nil {
			t.Fatal(err)
		}
		f.mustSettle(broker.Defer, "q", got[0]) // count 2 = MaxDeliveryCount
		f.wantCounts("q", broker.Counts{Deferred: 1})
		f = f.restart(newStore)
		f.wantCounts("q", broker.Counts{Deferred: 1})
		got, err = f.e.ReceiveDeferred(f.ctx, "q", []int64{m.SequenceNumber})
		if err != nil || got[0].DeliveryCount != 3 {
			t.Fatalf("after a restart: %v, %v", got, err)
		}
		f.mustSettle(broker.Abandon, "q", got[0])
		f.wantCounts("q", broker.Counts{DeadLettered: 1})
	})
}

// TestNothingUnseenIsDeadLettered follows the Go SDK's receive loop with
// MaxDeliveryCount 2: each call locks a batch, the application settles what
// it got, and what arrived too late is released. Nothing is dead-lettered.
func TestNothingUnseenIsDeadLettered(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxDeliveryCount: 2})
		f.sendN("q", 60)
		for f.counts("q").Active > 0 {
			batch := f.receive("q", 20)
			seen, late := batch[:(len(batch)+1)/2], batch[(len(batch)+1)/2:]
			for _, m := range late {
				f.mustSettle(broker.Release, "q", m)
			}
			for _, m := range seen {
				f.mustSettle(broker.Complete, "q", m)
			}
		}
		f.wantCounts("q", broker.Counts{})
	})
}

// TestMessageIDAssigned: a message sent without a MessageId gets a new GUID
// (spec §2); one sent with its own keeps it.
func TestMessageIDAssigned(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.send("q", &broker.Message{Body: []byte("a")}, &broker.Message{Body: []byte("b")}, msg("mine"))
		ms := f.browse("q", broker.CategoryActive)
		if _, err := uuid.Parse(ms[0].MessageID); err != nil || ms[0].MessageID == ms[1].MessageID {
			t.Fatalf("assigned ids %q and %q: want two different GUIDs (%v)", ms[0].MessageID, ms[1].MessageID, err)
		}
		if ms[2].MessageID != "mine" {
			t.Fatalf("own id = %q", ms[2].MessageID)
		}
	})
}
