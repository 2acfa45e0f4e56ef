package engine

import (
	"slices"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

func TestBrowseWindows(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.sendN("q", 10)
		page := func(cat broker.Category, from int64, max int) []int64 {
			ms, err := f.e.Browse(f.ctx, broker.BrowseRequest{Entity: "q", Category: cat, FromSequence: from, Max: max})
			if err != nil {
				t.Fatal(err)
			}
			return seqsOf(ms)
		}
		if got := page(broker.CategoryActive, 4, 3); !slices.Equal(got, []int64{4, 5, 6}) {
			t.Fatalf("window from 4 = %v", got)
		}
		if got := page(broker.CategoryActive, 9, 5); !slices.Equal(got, []int64{9, 10}) {
			t.Fatalf("tail window = %v", got)
		}
		// The dead-letter pane merges its available, locked and deferred parts.
		ms := f.receive("q", 6)
		for _, m := range ms {
			f.mustSettle(broker.DeadLetter, "q", m)
		}
		dlq := "q/$DeadLetterQueue"
		got, _ := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: dlq, Max: 1}) // seq 1 locked in the DLQ
		two, _ := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: dlq, Max: 1})
		f.mustSettle(broker.Defer, dlq, two[0]) // seq 2 deferred in the DLQ
		if s := page(broker.CategoryDeadLettered, 0, 4); !slices.Equal(s, []int64{1, 2, 3, 4}) {
			t.Fatalf("dead-lettered window = %v", s)
		}
		all, _ := f.e.Browse(f.ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, Max: 100})
		if all[0].LockToken != got[0].LockToken || all[1].State != broker.StateDeferred || len(all) != 6 {
			t.Fatalf("dead-lettered: token %v state %v len %d", all[0].LockToken, all[1].State, len(all))
		}
		// Peek changes nothing.
		again, _ := f.e.Browse(f.ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 100})
		for _, m := range again {
			if m.DeliveryCount != 1 || m.Locked() {
				t.Fatalf("browse changed seq %d", m.SequenceNumber)
			}
		}
	})
}
