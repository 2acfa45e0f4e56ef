package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

func TestRestartKeepsMessagesNotLocks(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxDeliveryCount: 5, DefaultMessageTimeToLive: time.Hour})
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}); err != nil {
			t.Fatal(err)
		}
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription,
			Rules: []broker.Rule{{Name: "r", Filter: &broker.CorrelationFilter{Subject: "x"}}}}); err != nil {
			t.Fatal(err)
		}
		f.queue("gone", broker.EntitySettings{}) // the newest entity, deleted below
		f.sendN("q", 6)
		f.mustSettle(broker.Complete, "q", f.receiveOne("q"))                      // 1 gone
		locked := f.receiveOne("q")                                                // 2 locked, no failure
		f.mustSettle(broker.Defer, "q", f.receiveOne("q"))                         // 3 deferred
		f.mustSettle(broker.DeadLetter, "q", f.receiveOne("q"))                    // 4 dead-lettered
		f.mustSettle(broker.Abandon, "q", f.receiveOne("q"))                       // 5 active, one failure
		f.e.Schedule(f.ctx, "q", t0.Add(time.Minute), []*broker.Message{msg("s")}) // 7 scheduled
		tm := msg("tm")
		tm.Subject = "x"
		f.send("t", tm)
		f.send("t", msg("unmatched"))
		if err := f.e.DeleteEntity(f.ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		before := f.counts("q")
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}

		g := openFixture(t, newStore(), f.clock)
		after := g.counts("q")
		want := broker.Counts{Active: 3, Deferred: 1, Scheduled: 1, DeadLettered: 1, SizeBytes: before.SizeBytes}
		if after != want {
			t.Fatalf("counts after restart = %+v, want %+v", after, want)
		}
		ms := g.browse("q", broker.CategoryActive)
		if !slices.Equal(seqsOf(ms), []int64{2, 5, 6}) {
			t.Fatalf("active after restart = %v", seqsOf(ms))
		}
		for _, m := range ms {
			// A restart is not a failed delivery: only the abandon counts.
			wantCount := uint32(1)
			if m.SequenceNumber == 5 {
				wantCount = 2
			}
			if m.DeliveryCount != wantCount || m.Locked() {
				t.Fatalf("seq %d: delivery %d locked %v after restart", m.SequenceNumber, m.DeliveryCount, m.Locked())
			}
			if !m.ExpiresAt.Equal(t0.Add(time.Hour)) {
				t.Fatalf("seq %d expires %v", m.SequenceNumber, m.ExpiresAt)
			}
		}
		if err := g.settle(broker.Complete, "q", locked); err == nil {
			t.Fatal("a lock from before the restart must be lost")
		}
		dl := g.browse("q", broker.CategoryDeadLettered)
		if len(dl) != 1 || dl[0].SequenceNumber != 4 {
			t.Fatalf("DLQ after restart = %v", seqsOf(dl))
		}
		d := g.browse("q", broker.CategoryDeferred)
		if len(d) != 1 || d[0].SequenceNumber != 3 || d[0].State != broker.StateDeferred {
			t.Fatalf("deferred after restart = %+v", d)
		}
		// Numbers are never reused.
		g.sendN("q", 1)
		if got := g.browse("q", broker.CategoryActive); got[len(got)-1].SequenceNumber != 8 {
			t.Fatalf("first seq after restart = %d, want 8", got[len(got)-1].SequenceNumber)
		}
		g.send("t", tm)
		if got := seqsOf(g.browse("t/Subscriptions/s", broker.CategoryActive)); !slices.Equal(got, []int64{1, 3}) {
			t.Fatalf("subscription after restart = %v, want [1 3]", got)
		}
		// The scheduled message still activates.
		g.advance(time.Minute)
		g.wantCounts("q", broker.Counts{Active: 5, Deferred: 1, DeadLettered: 1})
		// Entity ids are not reused either.
		g.queue("new", broker.EntitySettings{})
		en, _, _ := g.e.lookup("new")
		if en.id != 5 {
			t.Fatalf("new entity id = %d, want 5 (q=1 t=2 s=3 gone=4)", en.id)
		}
	})
}

// TestRestartIsNotAFailedDelivery: a lock lost in a restart is the
// broker's loss, not the receiver's failure, so it does not count towards
// MaxDeliveryCount; counted failures survive the restart.
func TestRestartIsNotAFailedDelivery(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxDeliveryCount: 2})
		f.sendN("q", 2)
		f.mustSettle(broker.Abandon, "q", f.receiveOne("q"))
		m := f.receiveOne("q") // seq 1, second delivery: the last allowed
		if m.SequenceNumber != 1 || m.DeliveryCount != 2 {
			t.Fatalf("seq %d delivery %d", m.SequenceNumber, m.DeliveryCount)
		}
		f.e.Close()
		g := openFixture(t, newStore(), f.clock)
		g.wantCounts("q", broker.Counts{Active: 2})
		again := g.receiveOne("q")
		if again.SequenceNumber != 1 || again.DeliveryCount != 2 {
			t.Fatalf("after restart: seq %d delivery %d, want 1 2", again.SequenceNumber, again.DeliveryCount)
		}
		g.mustSettle(broker.Abandon, "q", again) // the second failure
		g.wantCounts("q", broker.Counts{Active: 1, DeadLettered: 1})
		if r := g.browse("q", broker.CategoryDeadLettered)[0].DeadLetterReason(); r != broker.ReasonMaxDeliveryCountExceeded {
			t.Fatalf("reason %q", r)
		}
	})
}
