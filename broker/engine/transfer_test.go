package engine

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// forwardingSubscription creates topic t with subscriptions keep (no
// forward) and fwd (ForwardTo to), then deletes the target when gone.
func forwardingSubscription(f *fixture, to string, gone bool) {
	f.t.Helper()
	must := func(err error) {
		f.t.Helper()
		if err != nil {
			f.t.Fatal(err)
		}
	}
	if gone {
		f.queue(to, broker.EntitySettings{})
	}
	must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}))
	must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/keep", Kind: broker.KindSubscription}))
	must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/fwd", Kind: broker.KindSubscription,
		Settings: broker.EntitySettings{ForwardTo: to, MaxDeliveryCount: 1, LockDuration: 30 * time.Second}}))
	if gone {
		must(f.e.DeleteEntity(f.ctx, to))
	}
}

const (
	fwdSub  = "t/Subscriptions/fwd"
	fwdTDLQ = "t/Subscriptions/fwd/$Transfer/$DeadLetterQueue"
)

// wantTransferred checks the one message of a transfer dead-letter
// sub-queue.
func wantTransferred(t *testing.T, ms []*broker.Message, seq int64, id, reason, desc string) {
	t.Helper()
	if len(ms) != 1 {
		t.Fatalf("transfer dead-letter sub-queue holds %d messages (%v), want 1", len(ms), idsOf(ms))
	}
	m := ms[0]
	if m.SequenceNumber != seq || m.MessageID != id || m.SubQueue != broker.SubQueueTransferDeadLetter || m.State != broker.StateActive {
		t.Fatalf("message: seq %d id %q sub-queue %v state %v, want %d %q transfer dead-letter Active",
			m.SequenceNumber, m.MessageID, m.SubQueue, m.State, seq, id)
	}
	if m.DeadLetterReason() != reason || m.DeadLetterErrorDescription() != desc {
		t.Fatalf("reason %q description %q, want %q %q", m.DeadLetterReason(), m.DeadLetterErrorDescription(), reason, desc)
	}
}

func TestTransferDeadLetterOnFanOut(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		forwardingSubscription(f, "gone", true)
		a := msg("a")
		a.ApplicationProperties = map[string]any{"k": "v"}
		f.send("t", a) // accepted by the topic: the failing forward does not reach the sender
		f.wantCounts("t/Subscriptions/keep", broker.Counts{Active: 1})
		f.wantCounts(fwdSub, broker.Counts{TransferDeadLettered: 1})
		desc := `the auto-forwarding target "gone" does not exist`
		wantTransferred(t, f.browse(fwdTDLQ, broker.CategoryActive), 1, "a", broker.ReasonEntityNotFound, desc)
		got := f.browse(fwdTDLQ, broker.CategoryActive)[0]
		if got.ApplicationProperties["k"] != "v" || string(got.Body) != "body of a" || got.DeadLetterSource != "" {
			t.Fatalf("properties %v body %q source %q", got.ApplicationProperties, got.Body, got.DeadLetterSource)
		}
		wantSize := broker.MessageSize(got)
		if c := f.counts(fwdSub); c.SizeBytes != wantSize {
			t.Fatalf("size = %d, want %d", c.SizeBytes, wantSize)
		}
		// The Dead-lettered category of the entity merges both sub-queues;
		// the dead-letter sub-queue's own address shows only its messages.
		wantTransferred(t, f.browse(fwdSub, broker.CategoryDeadLettered), 1, "a", broker.ReasonEntityNotFound, desc)
		if ms := f.browse(fwdSub+"/$DeadLetterQueue", broker.CategoryDeadLettered); len(ms) != 0 {
			t.Fatalf("dead-letter sub-queue holds %v", idsOf(ms))
		}
		// Never forwarded again, even when the target comes back.
		f.queue("gone", broker.EntitySettings{})
		f.advance(time.Hour)
		f.wantCounts("gone", broker.Counts{})
		f.wantCounts(fwdSub, broker.Counts{TransferDeadLettered: 1})
		// New messages are forwarded now.
		f.send("t", msg("b"))
		if ms := f.browse("gone", broker.CategoryActive); !slices.Equal(idsOf(ms), []string{"b"}) {
			t.Fatalf("target = %v", idsOf(ms))
		}
		// It survives a restart, in its sub-queue with its properties.
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		g.wantCounts(fwdSub, broker.Counts{TransferDeadLettered: 1})
		wantTransferred(t, g.browse(fwdTDLQ, broker.CategoryActive), 1, "a", broker.ReasonEntityNotFound, desc)
		if c := g.counts(fwdSub); c.SizeBytes != wantSize {
			t.Fatalf("size after restart = %d, want %d", c.SizeBytes, wantSize)
		}
	})
}

func TestTransferDeadLetterSettlement(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		forwardingSubscription(f, "gone", true)
		f.send("t", msg("a"), msg("b"))
		ms, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: fwdSub, SubQueue: broker.SubQueueTransferDeadLetter, Max: 1})
		if err != nil || len(ms) != 1 {
			t.Fatalf("receive = %v, %v", idsOf(ms), err)
		}
		m := ms[0]
		if m.SequenceNumber != 1 || m.SubQueue != broker.SubQueueTransferDeadLetter || m.DeliveryCount != 1 ||
			!m.LockedUntil.Equal(t0.Add(30*time.Second)) {
			t.Fatalf("received seq %d sub-queue %v delivery %d locked until %v", m.SequenceNumber, m.SubQueue, m.DeliveryCount, m.LockedUntil)
		}
		f.wantCounts(fwdSub, broker.Counts{TransferDeadLettered: 2})
		// The lock belongs to the transfer dead-letter sub-queue.
		wantCode(t, f.settle(broker.Complete, fwdSub, m), broker.CodeLockLost)
		wantCode(t, f.settle(broker.Complete, fwdSub+"/$DeadLetterQueue", m), broker.CodeLockLost)
		be := wantCode(t, f.settle(broker.DeadLetter, fwdTDLQ, m), broker.CodeInvalid)
		if want := "the message with sequence number 1 is in the transfer dead-letter sub-queue already; it cannot be dead-lettered again"; be.Message != want {
			t.Fatalf("dead-letter again: %q, want %q", be.Message, want)
		}
		f.advance(10 * time.Second)
		until, err := f.e.RenewLock(f.ctx, fwdTDLQ, m.LockToken)
		if err != nil || !until.Equal(t0.Add(40*time.Second)) {
			t.Fatalf("renew = %v, %v", until, err)
		}
		// Lock expiry past MaxDeliveryCount (1) keeps it there, as in the
		// dead-letter sub-queue, and does not count.
		f.advance(30 * time.Second)
		f.wantCounts(fwdSub, broker.Counts{TransferDeadLettered: 2})
		m = f.receiveOne(fwdTDLQ)
		if m.SequenceNumber != 1 || m.DeliveryCount != 1 {
			t.Fatalf("after expiry: seq %d delivery %d", m.SequenceNumber, m.DeliveryCount)
		}
		f.mustSettle(broker.Defer, fwdTDLQ, m)
		if ms := f.browse(fwdTDLQ, broker.CategoryActive); !slices.Equal(seqsOf(ms), []int64{1, 2}) || ms[0].State != broker.StateDeferred {
			t.Fatalf("after defer: %v state %v", seqsOf(ms), ms[0].State)
		}
		ms, err = f.e.ReceiveDeferred(f.ctx, fwdTDLQ, []int64{1})
		if err != nil || len(ms) != 1 || ms[0].SubQueue != broker.SubQueueTransferDeadLetter {
			t.Fatalf("receive deferred = %v, %v", seqsOf(ms), err)
		}
		f.mustSettle(broker.Abandon, fwdTDLQ, ms[0])
		ms, err = f.e.ReceiveDeferred(f.ctx, fwdTDLQ, []int64{1})
		if err != nil || len(ms) != 1 {
			t.Fatalf("receive deferred again = %v, %v", seqsOf(ms), err)
		}
		f.mustSettle(broker.Complete, fwdTDLQ, ms[0])
		f.wantCounts(fwdSub, broker.Counts{TransferDeadLettered: 1})
		// Receive-and-delete.
		ms, err = f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: fwdTDLQ, Mode: broker.ReceiveAndDelete, Max: 5})
		if err != nil || !slices.Equal(idsOf(ms), []string{"b"}) || ms[0].SubQueue != broker.SubQueueTransferDeadLetter || ms[0].Locked() {
			t.Fatalf("receive-and-delete = %v, %v", idsOf(ms), err)
		}
		f.wantCounts(fwdSub, broker.Counts{})
		if c := f.counts(fwdSub); c.SizeBytes != 0 {
			t.Fatalf("size = %d, want 0", c.SizeBytes)
		}
	})
}

func TestTransferDeadLetterBadRequests(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	forwardingSubscription(f, "gone", true)
	_, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: fwdSub + "/$DeadLetterQueue", SubQueue: broker.SubQueueTransferDeadLetter, Max: 1})
	be := wantCode(t, err, broker.CodeInvalid)
	if want := `the address "t/Subscriptions/fwd/$DeadLetterQueue" names the dead-letter sub-queue but the request asks for the transfer dead-letter sub-queue`; be.Message != want {
		t.Fatalf("conflict: %q, want %q", be.Message, want)
	}
	_, err = f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: fwdSub, SubQueue: 7, Max: 1})
	wantCode(t, err, broker.CodeInvalid)
	be = wantCode(t, f.e.Send(f.ctx, fwdTDLQ, []*broker.Message{msg("x")}), broker.CodeInvalid)
	if want := "messages cannot be sent to a transfer dead-letter sub-queue"; be.Message != want {
		t.Fatalf("send: %q, want %q", be.Message, want)
	}
	_, err = f.e.Purge(f.ctx, fwdTDLQ, broker.SubQueueDeadLetter)
	wantCode(t, err, broker.CodeInvalid)
	_, err = f.e.AcceptSession(f.ctx, 0, fwdTDLQ, "s", 0)
	wantCode(t, err, broker.CodeInvalid)
	err = f.e.CreateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, Settings: broker.EntitySettings{ForwardTo: "x/$Transfer/$DeadLetterQueue"}})
	be = wantCode(t, err, broker.CodeInvalid)
	if want := `cannot forward to the transfer dead-letter sub-queue of "x"`; be.Message != want {
		t.Fatalf("create: %q, want %q", be.Message, want)
	}
	// A send straight to an entity whose forward fails is refused, and
	// nothing is stored.
	f.queue("src", broker.EntitySettings{ForwardTo: "dst"})
	f.queue("dst", broker.EntitySettings{RequiresSession: true})
	wantCode(t, f.e.Send(f.ctx, "src", []*broker.Message{msg("x")}), broker.CodeInvalid)
	f.wantCounts("src", broker.Counts{})
}

func TestTransferDeadLetterReasons(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		f.queue("full", broker.EntitySettings{MaxSizeInMegabytes: 1})
		for i := range 4 {
			f.send("full", &broker.Message{MessageID: fmt.Sprint("f", i), Body: make([]byte, 256000)}) // 256002 bytes each
		}
		f.queue("small", broker.EntitySettings{MaxMessageSizeInKilobytes: 1})
		f.queue("sess", broker.EntitySettings{RequiresSession: true})
		f.queue("ping", broker.EntitySettings{})
		f.queue("pong", broker.EntitySettings{ForwardTo: "ping"})
		must(f.e.UpdateEntity(f.ctx, broker.Entity{Path: "ping", Kind: broker.KindQueue, Settings: broker.EntitySettings{ForwardTo: "pong"}}))
		must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}))
		for _, to := range []string{"full", "small", "sess", "ping"} {
			must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/" + to, Kind: broker.KindSubscription,
				Settings: broker.EntitySettings{ForwardTo: to},
				Rules:    []broker.Rule{{Name: "to", Filter: &broker.CorrelationFilter{To: to}}}}))
		}
		send := func(to string, body int) {
			t.Helper()
			f.send("t", &broker.Message{MessageID: "x-" + to, To: to, Body: bytes.Repeat([]byte{'b'}, body)})
		}
		send("full", 30000)
		wantTransferred(t, f.browse("t/Subscriptions/full/$Transfer/$DeadLetterQueue", 0), 1, "x-full",
			broker.ReasonQuotaExceeded, "the entity is full: 1024008 bytes stored, 30010 more do not fit in 1 MB")
		send("small", 2000)
		wantTransferred(t, f.browse("t/Subscriptions/small/$Transfer/$DeadLetterQueue", 0), 2, "x-small",
			broker.ReasonMessageSizeExceeded, "message 0 is 2012 bytes; the limit is 1 KB (1024 bytes)")
		send("sess", 1)
		wantTransferred(t, f.browse("t/Subscriptions/sess/$Transfer/$DeadLetterQueue", 0), 3, "x-sess",
			broker.ReasonSessionIDIsNull, broker.DescriptionSessionIDIsNull)
		// t/Subscriptions/ping -> ping -> pong -> ping -> pong, whose fifth
		// hop is one too many: pong keeps it (its second number, 2).
		send("ping", 1)
		f.wantCounts("t/Subscriptions/ping", broker.Counts{})
		f.wantCounts("ping", broker.Counts{})
		ms := f.browse("pong/$Transfer/$DeadLetterQueue", 0)
		wantTransferred(t, ms, 2, "x-ping", broker.ReasonMaxTransferHopCountExceeded, broker.DescriptionMaxTransferHopCountExceeded)
		if ms[0].EnqueuedSequenceNumber != 4 {
			t.Fatalf("EnqueuedSequenceNumber = %d, want 4 (the subscription's)", ms[0].EnqueuedSequenceNumber)
		}
		for _, q := range []string{"full", "small", "sess"} {
			f.wantCounts("t/Subscriptions/"+q, broker.Counts{TransferDeadLettered: 1})
		}
		f.wantCounts("full", broker.Counts{Active: 4})
		f.wantCounts("small", broker.Counts{})
		f.wantCounts("sess", broker.Counts{})
		// A send straight to ping still fails at the hop limit.
		be := wantCode(t, f.e.Send(f.ctx, "ping", []*broker.Message{msg("direct")}), broker.CodeInvalid)
		if want := "auto-forwarding stops after 4 hops; check the ForwardTo chain that leads here"; be.Message != want {
			t.Fatalf("direct send: %q, want %q", be.Message, want)
		}
	})
}

func TestTransferDeadLetterOfDeadLetterForward(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("errors", broker.EntitySettings{})
		f.queue("relay", broker.EntitySettings{ForwardTo: "gone"})
		f.queue("gone", broker.EntitySettings{})
		f.queue("q", broker.EntitySettings{ForwardDeadLetteredMessagesTo: "errors"})
		f.queue("r", broker.EntitySettings{ForwardDeadLetteredMessagesTo: "relay"})
		if err := f.e.DeleteEntity(f.ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		if err := f.e.DeleteEntity(f.ctx, "errors"); err != nil {
			t.Fatal(err)
		}
		// The target of ForwardDeadLetteredMessagesTo is missing: the
		// source's transfer dead-letter sub-queue keeps the message, with
		// the properties of the settlement.
		f.sendN("q", 1)
		m := f.receiveOne("q")
		if err := f.e.Settle(f.ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "q", Token: m.LockToken,
			Reason: "bad", Description: "d", PropertiesToModify: map[string]any{"p": int32(1)}}); err != nil {
			t.Fatal(err)
		}
		f.wantCounts("q", broker.Counts{TransferDeadLettered: 1})
		ms := f.browse("q", broker.CategoryDeadLettered)
		wantTransferred(t, ms, 1, "m1", broker.ReasonEntityNotFound,
			`the target "errors" of ForwardDeadLetteredMessagesTo does not exist (dead-lettered with reason "bad")`)
		if ms[0].ApplicationProperties["p"] != int32(1) || ms[0].DeliveryCount != 1 {
			t.Fatalf("properties %v delivery %d", ms[0].ApplicationProperties, ms[0].DeliveryCount)
		}
		if c := f.counts("q"); c.SizeBytes != 12 {
			t.Fatalf("size = %d, want 12 (counted when sent, as a dead-lettered message is)", c.SizeBytes)
		}
		// The target exists but its own forward fails: the message was on
		// the target, whose transfer dead-letter sub-queue keeps it.
		f.sendN("r", 1)
		f.mustSettle(broker.DeadLetter, "r", f.receiveOne("r"))
		f.wantCounts("r", broker.Counts{})
		f.wantCounts("relay", broker.Counts{TransferDeadLettered: 1})
		ms = f.browse("relay/$Transfer/$DeadLetterQueue", 0)
		wantTransferred(t, ms, 1, "m1", broker.ReasonEntityNotFound, `the auto-forwarding target "gone" does not exist`)
		if ms[0].DeadLetterSource != "r" || ms[0].EnqueuedSequenceNumber != 0 {
			t.Fatalf("DeadLetterSource %q EnqueuedSequenceNumber %d", ms[0].DeadLetterSource, ms[0].EnqueuedSequenceNumber)
		}
		// Both survive a restart.
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		g.wantCounts("q", broker.Counts{TransferDeadLettered: 1})
		g.wantCounts("relay", broker.Counts{TransferDeadLettered: 1})
		if ms := g.browse("q/$Transfer/$DeadLetterQueue", 0); len(ms) != 1 || ms[0].DeadLetterReason() != broker.ReasonEntityNotFound {
			t.Fatalf("after restart: %v", idsOf(ms))
		}
	})
}

func TestTransferDeadLetterPurgeEventsAndWaiters(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	forwardingSubscription(f, "gone", true)
	events, stop := f.e.Events()
	defer stop()
	got := make(chan []*broker.Message, 1)
	go func() {
		ms, _ := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: fwdTDLQ, Max: 1, MaxWait: time.Hour})
		got <- ms
	}()
	waitForWaiters(t, f, fwdSub, broker.SubQueueTransferDeadLetter, 1)
	f.send("t", msg("a"))
	if ms := <-got; !slices.Equal(idsOf(ms), []string{"a"}) {
		t.Fatalf("waiting receiver got %v", idsOf(ms))
	}
	var dl *broker.Event
	for dl == nil {
		select {
		case ev := <-events:
			if ev.Kind == broker.EventDeadLettered {
				dl = &ev
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no dead-lettered event")
		}
	}
	if dl.Entity != fwdSub || dl.SubQueue != broker.SubQueueTransferDeadLetter || dl.Sequence != 1 || dl.Reason != broker.ReasonEntityNotFound {
		t.Fatalf("event %+v", *dl)
	}
	// Purge by address or by sub-queue; the dead-letter sub-queue is left.
	f.send("t", msg("b"), msg("c"))
	f.mustSettle(broker.DeadLetter, "t/Subscriptions/keep", f.receiveOne("t/Subscriptions/keep"))
	n, err := f.e.Purge(f.ctx, fwdTDLQ, broker.SubQueueMain)
	if err != nil || n != 3 {
		t.Fatalf("purge by address = %d, %v; want 3 (one locked)", n, err)
	}
	f.send("t", msg("d"))
	n, err = f.e.Purge(f.ctx, "t", broker.SubQueueTransferDeadLetter)
	if err != nil || n != 1 {
		t.Fatalf("purge of the topic's subscriptions = %d, %v; want 1", n, err)
	}
	f.wantCounts(fwdSub, broker.Counts{})
	f.wantCounts("t/Subscriptions/keep", broker.Counts{Active: 3, DeadLettered: 1})
}
