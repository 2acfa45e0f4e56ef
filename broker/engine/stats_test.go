package engine

import (
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// TestStatsCountEvents checks that Stats reports each entity's counts and
// counts sends, deliveries, settlements, expiries and dead-letters without
// any event subscriber.
func TestStatsCountEvents(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxDeliveryCount: 1, LockDuration: 10 * time.Second})
		f.queue("other", broker.EntitySettings{})
		f.sendN("q", 5)
		f.send("q", &broker.Message{MessageID: "ttl", Body: []byte("x"), TimeToLive: time.Second})

		ms := f.receive("q", 2)
		if len(ms) != 2 {
			t.Fatalf("received %d, want 2", len(ms))
		}
		f.mustSettle(broker.Complete, "q", ms[0])
		f.mustSettle(broker.Abandon, "q", ms[1]) // MaxDeliveryCount 1: dead-lettered
		f.receiveOne("q")                        // left to expire: lock expired, dead-lettered
		f.advance(11 * time.Second)              // and "ttl" expires unreceived

		stats, err := f.e.Stats(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(stats) != 2 || stats[0].Path != "other" || stats[1].Path != "q" {
			t.Fatalf("Stats = %+v, want other and q", stats)
		}
		if stats[0].Events != ([numEventKinds]uint64{}) {
			t.Errorf("other counted events: %v", stats[0].Events)
		}
		q := stats[1]
		if want := f.counts("q"); q.Counts != want {
			t.Errorf("Stats counts = %+v, Entity counts %+v", q.Counts, want)
		}
		for kind, want := range map[broker.EventKind]uint64{
			broker.EventSent: 6, broker.EventLocked: 3, broker.EventCompleted: 1,
			broker.EventAbandoned: 1, broker.EventLockExpired: 1, broker.EventExpired: 1,
			broker.EventDeadLettered: 2,
		} {
			if got := q.Event(kind); got != want {
				t.Errorf("%s = %d, want %d", kind, got, want)
			}
		}
	})
}
