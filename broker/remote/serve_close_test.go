package remote

import (
	"context"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestServeCloseGivesBackLocks: message locks outlive their connection on
// Service Bus, so a dashboard that quits gives its own back explicitly,
// released (not a failed delivery), instead of leaving them to expire.
func TestServeCloseGivesBackLocks(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{LockDuration: time.Hour})
	c := env.dial(env.config(""))
	ctx := context.Background()
	if err := c.Send(ctx, "q", textMessages(3)); err != nil {
		t.Fatal(err)
	}
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 2, MaxWait: time.Second})
	if err != nil || len(got) != 2 {
		t.Fatalf("Receive = %v, %v", seqs(got), err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	n, err := env.eng.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 10})
	if err != nil || len(n) != 3 {
		t.Fatalf("active after Close = %v, %v; want all 3 back", seqs(n), err)
	}
	for _, m := range n {
		if m.DeliveryCount != 1 {
			t.Fatalf("seq %d DeliveryCount %d after the give-back, want 1 (released)", m.SequenceNumber, m.DeliveryCount)
		}
	}
}
