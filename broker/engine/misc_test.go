package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

func TestReceiveAndDelete(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.sendN("q", 3)
		ms, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.ReceiveAndDelete, Max: 2})
		if err != nil || !slices.Equal(seqsOf(ms), []int64{1, 2}) {
			t.Fatalf("receive-and-delete = %v, %v", seqsOf(ms), err)
		}
		if ms[0].Locked() || ms[0].DeliveryCount != 1 || string(ms[0].Body) != "body of m1" {
			t.Fatalf("message: locked %v delivery %d body %q", ms[0].Locked(), ms[0].DeliveryCount, ms[0].Body)
		}
		f.wantCounts("q", broker.Counts{Active: 1})
	})
}

func TestTopicScheduleCancelAndPurge(t *testing.T) {
	f := topicFixture(t, store.NewMemory())
	red := msg("red")
	red.ApplicationProperties = map[string]any{"color": "red"}
	seqs, err := f.e.Schedule(f.ctx, "t", t0.Add(time.Hour), []*broker.Message{red, msg("plain")})
	if err != nil || !slices.Equal(seqs, []int64{1, 2}) {
		t.Fatalf("schedule on topic = %v, %v", seqs, err)
	}
	f.wantCounts("t/Subscriptions/all", broker.Counts{Scheduled: 2})
	f.wantCounts("t/Subscriptions/red", broker.Counts{Scheduled: 1})
	if err := f.e.CancelScheduled(f.ctx, "t", []int64{1}); err != nil {
		t.Fatal(err)
	}
	f.wantCounts("t/Subscriptions/all", broker.Counts{Scheduled: 1})
	f.wantCounts("t/Subscriptions/red", broker.Counts{})
	wantCode(t, f.e.CancelScheduled(f.ctx, "t", []int64{1}), broker.CodeMessageNotFound)
	f.send("t", red)
	n, err := f.e.Purge(f.ctx, "t", broker.SubQueueMain)
	if err != nil || n != 3 {
		t.Fatalf("purge topic = %d, %v; want 3 (all: scheduled + red; red: red)", n, err)
	}
}

func TestWaitersOnDeadLetterQueueAndSession(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{})
	f.queue("s", broker.EntitySettings{RequiresSession: true})
	dlq := make(chan []*broker.Message, 1)
	go func() {
		ms, _ := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: "q/$DeadLetterQueue", Max: 1, MaxWait: time.Hour})
		dlq <- ms
	}()
	waitForWaiters(t, f, "q", broker.SubQueueDeadLetter, 1)
	f.sendN("q", 1)
	f.mustSettle(broker.DeadLetter, "q", f.receiveOne("q"))
	select {
	case ms := <-dlq:
		if len(ms) != 1 || ms[0].SequenceNumber != 1 {
			t.Fatalf("DLQ waiter got %v", seqsOf(ms))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the DLQ waiter was not woken")
	}

	if _, err := f.e.AcceptSession(f.ctx, 1, "s", "A", 0); err != nil {
		t.Fatal(err)
	}
	got := make(chan []*broker.Message, 1)
	go func() {
		ms, _ := f.e.ReceiveSession(f.ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 1, MaxWait: time.Hour})
		got <- ms
	}()
	en, _, _ := f.e.lookup("s")
	deadline := time.Now().Add(5 * time.Second)
	for {
		en.mu.Lock()
		n := len(en.sessions["A"].waiters.list)
		en.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session receive did not wait")
		}
		time.Sleep(time.Millisecond)
	}
	f.send("s", sessionMsg("b", "B")) // another session: does not wake A's receiver
	f.send("s", sessionMsg("a", "A"))
	select {
	case ms := <-got:
		if len(ms) != 1 || ms[0].MessageID != "a" {
			t.Fatalf("session waiter got %v", idsOf(ms))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the session waiter was not woken")
	}
}

func TestUpdateSubscriptionRules(t *testing.T) {
	f := topicFixture(t, store.NewMemory())
	// Nil rules keep the filter.
	if err := f.e.UpdateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/red", Kind: broker.KindSubscription,
		Settings: broker.EntitySettings{MaxDeliveryCount: 4}}); err != nil {
		t.Fatal(err)
	}
	ent, _ := f.e.Entity(f.ctx, "t/Subscriptions/red")
	if len(ent.Rules) != 1 || ent.Settings.MaxDeliveryCount != 4 {
		t.Fatalf("after a settings update: %+v", ent)
	}
	// An empty list removes them: the subscription takes nothing.
	if err := f.e.UpdateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/red", Kind: broker.KindSubscription, Rules: []broker.Rule{}}); err != nil {
		t.Fatal(err)
	}
	red := msg("red")
	red.ApplicationProperties = map[string]any{"color": "red"}
	f.send("t", msg("any"), red)
	f.wantCounts("t/Subscriptions/red", broker.Counts{})
	f.wantCounts("t/Subscriptions/all", broker.Counts{Active: 2})
}

func TestNoSubscriberEmitDoesNotAllocate(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{})
	en, _, _ := f.e.lookup("q")
	x := &entry{seq: 1, msgID: "m"}
	if n := testing.AllocsPerRun(100, func() { en.emit(broker.EventSent, x, "") }); n != 0 {
		t.Fatalf("emit without subscribers allocates %v times", n)
	}
}
