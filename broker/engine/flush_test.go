package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// slowStore delays every Apply while slow is set.
type slowStore struct {
	store.Store
	slow atomic.Bool
}

func (s *slowStore) Apply(b *store.Batch) (store.Pending, error) {
	if s.slow.Load() {
		time.Sleep(50 * time.Millisecond)
	}
	return s.Store.Apply(b)
}

// TestTickWaitsForTheSweepersForwarding: when the sweeper goroutine, not
// Tick, dead-letters a message whose lock expired, Tick still returns only
// once the message is forwarded to ForwardDeadLetteredMessagesTo and its
// size has left the source (TestForwardDeadLetteredMessages saw the source
// at 12 bytes with no message, once under load, before).
func TestTickWaitsForTheSweepersForwarding(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		st := &slowStore{Store: newStore()}
		f := newFixture(t, st)
		f.queue("errors", broker.EntitySettings{})
		f.queue("q", broker.EntitySettings{ForwardDeadLetteredMessagesTo: "errors", MaxDeliveryCount: 1, LockDuration: time.Second})
		f.sendN("q", 1)
		f.receiveOne("q")
		st.slow.Store(true)
		f.clock.Advance(time.Second)
		// The sweeper takes the message out of q; its forward is slow.
		deadline := time.Now().Add(10 * time.Second)
		for f.counts("q").Locked != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the sweeper did not process the expired lock")
			}
			time.Sleep(time.Millisecond)
		}
		f.e.Tick()
		st.slow.Store(false)
		if c := f.counts("q"); c.SizeBytes != 0 {
			t.Fatalf("source size = %d after Tick, want 0", c.SizeBytes)
		}
		if got := f.browse("errors", broker.CategoryActive); len(got) != 1 {
			t.Fatalf("%d messages forwarded when Tick returned, want 1", len(got))
		}
	})
}
