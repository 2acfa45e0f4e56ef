package remote

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestServeTransferDeadLetter browses, receives, renews, settles and purges
// the transfer dead-letter sub-queue of a queue whose dead-lettered messages
// cannot be forwarded, next to its dead-letter sub-queue.
func TestServeTransferDeadLetter(t *testing.T) {
	env := newServe(t, nil)
	ctx := context.Background()
	env.queue("gone", broker.EntitySettings{})
	env.queue("q", broker.EntitySettings{ForwardDeadLetteredMessagesTo: "gone"})
	if err := env.eng.DeleteEntity(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	c := env.dial(env.config(""))
	if err := c.Send(ctx, "q", textMessages(3)); err != nil {
		t.Fatal(err)
	}
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 3, MaxWait: time.Second})
	if err != nil || len(got) != 3 {
		t.Fatalf("Receive = %v, %v", seqs(got), err)
	}
	for _, m := range []*broker.Message{got[0], got[2]} {
		if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "q", Token: m.LockToken, Reason: "bad"}); err != nil {
			t.Fatal(err)
		}
	}
	// Without ForwardDeadLetteredMessagesTo the next one stays in the
	// dead-letter sub-queue (the update loses the lock on got[1]).
	if err := env.eng.UpdateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue}); err != nil {
		t.Fatal(err)
	}
	again, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	if err != nil || len(again) != 1 || again[0].SequenceNumber != 2 {
		t.Fatalf("Receive again = %v, %v", seqs(again), err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "q", Token: again[0].LockToken}); err != nil {
		t.Fatal(err)
	}

	ents, err := c.Entities(ctx)
	if err != nil || len(ents) != 1 {
		t.Fatalf("Entities = %v, %v", ents, err)
	}
	if n := ents[0].Counts; n.DeadLettered != 1 || n.TransferDeadLettered != 2 || n.Active != 0 || n.Deferred != 0 {
		t.Fatalf("counts = %+v, want 1 dead-lettered and 2 transfer-dead-lettered", n)
	}
	// The Dead-lettered category merges both sub-queues in sequence order,
	// each message marked with its sub-queue.
	dl, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, Max: 10})
	if err != nil || !reflect.DeepEqual(seqs(dl), []int64{1, 2, 3}) {
		t.Fatalf("Browse Dead-lettered = %v, %v", seqs(dl), err)
	}
	wantSubs := []broker.SubQueue{broker.SubQueueTransferDeadLetter, broker.SubQueueDeadLetter, broker.SubQueueTransferDeadLetter}
	for i, m := range dl {
		if m.SubQueue != wantSubs[i] {
			t.Fatalf("seq %d sub-queue %v, want %v", m.SequenceNumber, m.SubQueue, wantSubs[i])
		}
	}
	if r := dl[0].DeadLetterReason(); r != broker.ReasonEntityNotFound {
		t.Fatalf("reason %q", r)
	}
	if win, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, FromSequence: 2, Max: 1}); err != nil || !reflect.DeepEqual(seqs(win), []int64{2}) {
		t.Fatalf("Browse window from 2 = %v, %v", seqs(win), err)
	}
	tdlq := "q" + broker.TransferDeadLetterSuffix
	only, err := c.Browse(ctx, broker.BrowseRequest{Entity: tdlq, Max: 10})
	if err != nil || !reflect.DeepEqual(seqs(only), []int64{1, 3}) {
		t.Fatalf("Browse %s = %v, %v", tdlq, seqs(only), err)
	}

	// Receive from it, renew, abandon, receive again, complete.
	tm, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", SubQueue: broker.SubQueueTransferDeadLetter, Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	if err != nil || len(tm) != 1 || tm[0].SequenceNumber != 1 || tm[0].SubQueue != broker.SubQueueTransferDeadLetter || !tm[0].Locked() {
		t.Fatalf("Receive transfer DLQ = %v, %v", seqs(tm), err)
	}
	if _, err := c.RenewLock(ctx, tdlq, tm[0].LockToken); err != nil {
		t.Fatalf("RenewLock: %v", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Abandon, Entity: tdlq, Token: tm[0].LockToken}); err != nil {
		t.Fatalf("Abandon: %v", err)
	}
	tm, err = c.Receive(ctx, broker.ReceiveRequest{Entity: tdlq, Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	// Nothing in a dead-letter sub-queue counts as a failed delivery.
	if err != nil || len(tm) != 1 || tm[0].SequenceNumber != 1 || tm[0].DeliveryCount != 1 {
		t.Fatalf("Receive after abandon = %v, %v", seqs(tm), err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: tdlq, Token: tm[0].LockToken}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	// Purge the transfer dead-letter sub-queue only.
	if n, err := c.Purge(ctx, "q", broker.SubQueueTransferDeadLetter); err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want 1", n, err)
	}
	ent, _ := env.eng.Entity(ctx, "q")
	if want := (broker.Counts{DeadLettered: 1}); ent.Counts.DeadLettered != 1 || ent.Counts.TransferDeadLettered != 0 || ent.Counts.Active != 0 {
		t.Fatalf("engine counts = %+v, want %+v", ent.Counts, want)
	}
}
