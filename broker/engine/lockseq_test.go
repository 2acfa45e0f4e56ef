package engine

import (
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// deadLetter15 fills q's dead-letter queue with 15 messages whose delivery
// counts differ (some were abandoned before), and returns them as browsed.
func deadLetter15(f *fixture, q string) []*broker.Message {
	f.t.Helper()
	f.queue(q, broker.EntitySettings{})
	f.sendN(q, 15)
	for i := 0; i < 15; i++ {
		m := f.receiveOne(q)
		for k := 0; k < i%3; k++ { // 0, 1 or 2 failed deliveries first
			f.mustSettle(broker.Abandon, q, m)
			m = f.receiveOne(q)
		}
		f.mustSettle(broker.DeadLetter, q, m)
	}
	dl := f.browse(q+broker.DeadLetterSuffix, broker.CategoryActive)
	if len(dl) != 15 {
		f.t.Fatalf("%d dead-lettered", len(dl))
	}
	return dl
}

// TestLockSequenceResubmitsOneOfFifteen resubmits the eighth of 15
// dead-lettered messages by locking exactly it: the other 14 keep their
// delivery counts and stay unlocked, available to any receiver meanwhile.
func TestLockSequenceResubmitsOneOfFifteen(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		before := deadLetter15(f, "q")
		dlq := "q" + broker.DeadLetterSuffix
		chosen := before[7]
		got, err := f.e.LockSequence(f.ctx, dlq, []int64{chosen.SequenceNumber})
		if err != nil || len(got) != 1 || got[0].SequenceNumber != chosen.SequenceNumber || !got[0].Locked() {
			t.Fatalf("LockSequence = %v, %v", got, err)
		}
		if got[0].DeliveryCount != chosen.DeliveryCount {
			t.Errorf("locking counted a delivery: %d, was %d", got[0].DeliveryCount, chosen.DeliveryCount)
		}
		// Meanwhile the others are free.
		locked := 0
		for _, m := range f.browse(dlq, broker.CategoryActive) {
			if !m.LockedUntil.IsZero() {
				locked++
			}
		}
		if locked != 1 {
			t.Fatalf("%d locked in the dead-letter queue, want the chosen one only", locked)
		}
		if err := broker.Resubmit(f.ctx, f.e, dlq, got[0], "q"); err != nil {
			t.Fatal(err)
		}
		after := f.browse(dlq, broker.CategoryActive)
		if len(after) != 14 {
			t.Fatalf("%d left in the dead-letter queue, want 14", len(after))
		}
		dc := map[int64]uint32{}
		for _, m := range before {
			dc[m.SequenceNumber] = m.DeliveryCount
		}
		for _, m := range after {
			if m.SequenceNumber == chosen.SequenceNumber {
				t.Fatal("the resubmitted message is still dead-lettered")
			}
			if m.DeliveryCount != dc[m.SequenceNumber] || !m.LockedUntil.IsZero() || m.Locked() {
				t.Errorf("sequence number %d: delivery count %d (was %d), locked until %v", m.SequenceNumber,
					m.DeliveryCount, dc[m.SequenceNumber], m.LockedUntil)
			}
		}
		if act := f.browse("q", broker.CategoryActive); len(act) != 1 || act[0].MessageID != chosen.MessageID {
			t.Fatalf("resubmitted copy: %v", idsOf(act))
		}
	})
}

// TestLockSequenceRefusals: a number that is locked, deferred, missing or
// in a session's main queue locks nothing and says why.
func TestLockSequenceRefusals(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.sendN("q", 4)
		held := f.receiveOne("q") // 1 is locked by another receiver
		d := f.receiveOne("q")
		f.mustSettle(broker.Defer, "q", d) // 2 is deferred
		for _, c := range []struct {
			seqs []int64
			want string
		}{
			{[]int64{3, held.SequenceNumber}, "locked by another receiver"},
			{[]int64{d.SequenceNumber}, "is deferred"},
			{[]int64{3, 99}, "no available message with sequence number 99 in the main queue"},
		} {
			_, err := f.e.LockSequence(f.ctx, "q", c.seqs)
			be := wantCode(t, err, broker.CodeMessageNotFound)
			if !strings.Contains(be.Message, c.want) {
				t.Errorf("%v: %q does not say %q", c.seqs, be.Message, c.want)
			}
		}
		if locked := f.browse("q", broker.CategoryLocked); len(locked) != 1 {
			t.Fatalf("a refused lock left %d locks", len(locked))
		}
		got, err := f.e.LockSequence(f.ctx, "q", []int64{4, 3, 4})
		if err != nil || len(seqsOf(got)) != 2 {
			t.Fatalf("LockSequence(4, 3, 4) = %v, %v", seqsOf(got), err)
		}
		f.queue("s", broker.EntitySettings{RequiresSession: true})
		f.send("s", &broker.Message{MessageID: "x", SessionID: "A"})
		_, err = f.e.LockSequence(f.ctx, "s", []int64{1})
		wantCode(t, err, broker.CodeInvalid)
		_, err = f.e.LockSequence(f.ctx, "q", nil)
		wantCode(t, err, broker.CodeInvalid)
	})
}
