package engine

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

func TestScheduleAndCancel(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{DefaultMessageTimeToLive: time.Hour})
		at := t0.Add(10 * time.Minute)
		seqs, err := f.e.Schedule(f.ctx, "q", at, []*broker.Message{msg("a"), msg("b")})
		if err != nil || !slices.Equal(seqs, []int64{1, 2}) {
			t.Fatalf("schedule = %v, %v", seqs, err)
		}
		// Sending with ScheduledEnqueueTime set works the same.
		c := msg("c")
		c.ScheduledEnqueueTime = at
		f.send("q", c)
		f.wantCounts("q", broker.Counts{Scheduled: 3})
		sch := f.browse("q", broker.CategoryScheduled)
		if sch[0].State != broker.StateScheduled || !sch[0].ScheduledEnqueueTime.Equal(at) || !sch[0].ExpiresAt.Equal(at.Add(time.Hour)) {
			t.Fatalf("scheduled message: state %v at %v expires %v", sch[0].State, sch[0].ScheduledEnqueueTime, sch[0].ExpiresAt)
		}
		if len(f.receive("q", 10)) != 0 {
			t.Fatal("a scheduled message must not be delivered early")
		}
		if err := f.e.CancelScheduled(f.ctx, "q", []int64{2, 42}); !errors.Is(err, broker.ErrMessageNotFound) {
			t.Fatalf("cancel with an unknown number: %v", err)
		}
		f.wantCounts("q", broker.Counts{Scheduled: 3}) // nothing cancelled
		if err := f.e.CancelScheduled(f.ctx, "q", []int64{2}); err != nil {
			t.Fatal(err)
		}
		f.advance(10*time.Minute - time.Nanosecond)
		f.wantCounts("q", broker.Counts{Scheduled: 2})
		f.advance(time.Nanosecond)
		f.wantCounts("q", broker.Counts{Active: 2})
		got := f.receive("q", 10)
		if !slices.Equal(idsOf(got), []string{"a", "c"}) || got[0].State != broker.StateScheduled { // see TestReceivedScheduledState
			t.Fatalf("after activation: %v state %v", idsOf(got), got[0].State)
		}
		// A time in the past is simply active.
		seqs, _ = f.e.Schedule(f.ctx, "q", t0, []*broker.Message{msg("past")})
		if seqs[0] != 4 {
			t.Fatalf("seq = %d, want 4", seqs[0])
		}
		f.wantCounts("q", broker.Counts{Active: 1, Locked: 2})
	})
}

// TestReceivedScheduledState: a message that was scheduled reports
// StateScheduled when received once active (Service Bus's
// x-opt-message-state; the JavaScript SDK's sendAndSchedule.spec.ts
// expects "scheduled"), under peek-lock and receive-and-delete, also after a
// restart; a peek shows its current state, and a message never scheduled
// (or scheduled in the past) is received active.
func TestReceivedScheduledState(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		at := t0.Add(10 * time.Second)
		if _, err := f.e.Schedule(f.ctx, "q", at, []*broker.Message{msg("s1"), msg("s2"), msg("s3")}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.e.Schedule(f.ctx, "q", t0, []*broker.Message{msg("past")}); err != nil {
			t.Fatal(err)
		}
		f.send("q", msg("plain"))
		f.advance(10 * time.Second)
		if p := f.browse("q", broker.CategoryActive); len(p) != 5 || p[0].State != broker.StateActive {
			t.Fatalf("peek after activation: %d messages, state %v", len(p), p[0].State)
		}
		if m := f.receiveOne("q"); m.MessageID != "s1" || m.State != broker.StateScheduled {
			t.Fatalf("peek-lock: %s state %v, want s1 Scheduled", m.MessageID, m.State)
		}
		f = f.restart(newStore)
		ms, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.ReceiveAndDelete, Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]broker.State{"s1": broker.StateScheduled, "s2": broker.StateScheduled, "s3": broker.StateScheduled,
			"past": broker.StateActive, "plain": broker.StateActive}
		for _, m := range ms {
			if m.State != want[m.MessageID] {
				t.Errorf("receive-and-delete after a restart: %s state %v, want %v", m.MessageID, m.State, want[m.MessageID])
			}
			delete(want, m.MessageID)
		}
		if len(want) != 0 {
			t.Fatalf("not received: %v", want)
		}
	})
}

func TestDuplicateDetection(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: time.Minute})
		f.send("q", msg("a"), msg("b"), msg("a"))
		f.send("q", msg("b"))
		ms := f.browse("q", broker.CategoryActive)
		if !slices.Equal(idsOf(ms), []string{"a", "b"}) || !slices.Equal(seqsOf(ms), []int64{1, 2}) {
			t.Fatalf("after duplicates: ids %v seqs %v", idsOf(ms), seqsOf(ms))
		}
		// Completing does not reset the window.
		f.mustSettle(broker.Complete, "q", f.receiveOne("q"))
		f.send("q", msg("a"))
		f.wantCounts("q", broker.Counts{Active: 1})
		f.advance(time.Minute)
		f.send("q", msg("a"))
		ms = f.browse("q", broker.CategoryActive)
		if !slices.Equal(seqsOf(ms), []int64{2, 3}) {
			t.Fatalf("after the window: seqs %v, want [2 3] (no number for dropped messages)", seqsOf(ms))
		}
		// Without duplicate detection the same id is stored twice.
		f.queue("plain", broker.EntitySettings{})
		f.send("plain", msg("a"), msg("a"))
		f.wantCounts("plain", broker.Counts{Active: 2})
	})
}

func topicFixture(t *testing.T, st store.Store) *fixture {
	f := newFixture(t, st)
	ctx := f.ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.e.CreateEntity(ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}))
	must(f.e.CreateEntity(ctx, broker.Entity{Path: "t/Subscriptions/all", Kind: broker.KindSubscription}))
	must(f.e.CreateEntity(ctx, broker.Entity{Path: "t/Subscriptions/red", Kind: broker.KindSubscription,
		Rules: []broker.Rule{{Name: "red", Filter: &broker.CorrelationFilter{Properties: map[string]any{"color": "red"}}}}}))
	must(f.e.CreateEntity(ctx, broker.Entity{Path: "t/Subscriptions/orders", Kind: broker.KindSubscription,
		Rules: []broker.Rule{
			{Name: "subj", Filter: &broker.CorrelationFilter{Subject: "order", ContentType: "application/json"}},
			{Name: "n", Filter: &broker.CorrelationFilter{Properties: map[string]any{"n": int64(7)}}},
		}}))
	return f
}

func TestTopicFanOutWithCorrelationFilters(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := topicFixture(t, newStore())
		red := msg("red")
		red.ApplicationProperties = map[string]any{"color": "red"}
		order := msg("order")
		order.Subject, order.ContentType = "order", "application/json"
		almost := msg("almost")
		almost.Subject = "order" // content type missing
		seven := msg("seven")
		seven.ApplicationProperties = map[string]any{"n": int32(7)} // numbers match by value
		f.send("t", red, order, almost, seven)
		if got := idsOf(f.browse("t/Subscriptions/all", broker.CategoryActive)); !slices.Equal(got, []string{"red", "order", "almost", "seven"}) {
			t.Fatalf("all = %v", got)
		}
		redSub := f.browse("t/Subscriptions/red", broker.CategoryActive)
		if !slices.Equal(idsOf(redSub), []string{"red"}) {
			t.Fatalf("red = %v", idsOf(redSub))
		}
		if got := idsOf(f.browse("t/Subscriptions/orders", broker.CategoryActive)); !slices.Equal(got, []string{"order", "seven"}) {
			t.Fatalf("orders = %v", got)
		}
		// Subscriptions share the topic's sequence numbers.
		if redSub[0].SequenceNumber != 1 {
			t.Fatalf("red seq = %d, want 1", redSub[0].SequenceNumber)
		}
		if got := seqsOf(f.browse("t/Subscriptions/orders", broker.CategoryActive)); !slices.Equal(got, []int64{2, 4}) {
			t.Fatalf("orders seqs = %v", got)
		}
		// Receiving from the topic itself is refused.
		_, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: "t", Max: 1})
		wantCode(t, err, broker.CodeInvalid)
		// A send to a subscription goes there only (resubmit), with a fresh
		// topic number.
		f.send("t/Subscriptions/red", msg("direct"))
		if got := seqsOf(f.browse("t/Subscriptions/red", broker.CategoryActive)); !slices.Equal(got, []int64{1, 5}) {
			t.Fatalf("red after direct send = %v", got)
		}
		f.wantCounts("t/Subscriptions/all", broker.Counts{Active: 4})
		// A SQL rule that does not parse is refused.
		err = f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/sql", Kind: broker.KindSubscription,
			Rules: []broker.Rule{{Name: "s", SQL: "color = 'red"}}})
		wantCode(t, err, broker.CodeInvalid)
		// Deleting the topic deletes its subscriptions.
		if err := f.e.DeleteEntity(f.ctx, "t"); err != nil {
			t.Fatal(err)
		}
		_, err = f.e.Entity(f.ctx, "t/Subscriptions/red")
		wantCode(t, err, broker.CodeNotFound)
		ents, _ := f.e.Entities(f.ctx)
		if len(ents) != 0 {
			t.Fatalf("entities after deleting the topic: %v", ents)
		}
	})
}

func TestResubmitFromSubscriptionDeadLetterQueue(t *testing.T) {
	f := topicFixture(t, store.NewMemory())
	red := msg("red")
	red.ApplicationProperties = map[string]any{"color": "red"}
	f.send("t", red)
	m := f.receiveOne("t/Subscriptions/red")
	f.mustSettle(broker.DeadLetter, "t/Subscriptions/red", m)
	dlq := "t/Subscriptions/red/$DeadLetterQueue"
	got := f.receiveOne(dlq)
	if err := broker.Resubmit(f.ctx, f.e, dlq, got, broker.ResubmitTarget(dlq)); err != nil {
		t.Fatal(err)
	}
	f.wantCounts("t/Subscriptions/red", broker.Counts{Active: 1})
	f.wantCounts("t/Subscriptions/all", broker.Counts{Active: 1})
	back := f.browse("t/Subscriptions/red", broker.CategoryActive)[0]
	if back.MessageID != "red" || back.DeadLetterReason() != "" {
		t.Fatalf("resubmitted: %q reason %q", back.MessageID, back.DeadLetterReason())
	}
}

func TestForwardTo(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("target", broker.EntitySettings{})
		f.send("target", msg("x")) // target seq 1
		f.queue("src", broker.EntitySettings{ForwardTo: "target"})
		f.send("src", msg("a"), msg("b"))
		f.wantCounts("src", broker.Counts{})
		ms := f.browse("target", broker.CategoryActive)
		if !slices.Equal(idsOf(ms), []string{"x", "a", "b"}) || !slices.Equal(seqsOf(ms), []int64{1, 2, 3}) {
			t.Fatalf("target: ids %v seqs %v", idsOf(ms), seqsOf(ms))
		}
		if ms[1].EnqueuedSequenceNumber != 1 || ms[2].EnqueuedSequenceNumber != 2 || ms[0].EnqueuedSequenceNumber != 0 {
			t.Fatalf("EnqueuedSequenceNumber = %d %d %d", ms[0].EnqueuedSequenceNumber, ms[1].EnqueuedSequenceNumber, ms[2].EnqueuedSequenceNumber)
		}
		// The source keeps counting.
		f.send("src", msg("c"))
		if got := f.browse("target", broker.CategoryActive)[3].EnqueuedSequenceNumber; got != 3 {
			t.Fatalf("third forwarded EnqueuedSequenceNumber = %d", got)
		}
		// Self-forwarding is refused; a loop stops after four hops.
		err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "self", Kind: broker.KindQueue, Settings: broker.EntitySettings{ForwardTo: "SELF"}})
		wantCode(t, err, broker.CodeInvalid)
		f.queue("ping", broker.EntitySettings{ForwardTo: "pong"})
		f.queue("pong", broker.EntitySettings{ForwardTo: "ping"})
		wantCode(t, f.e.Send(f.ctx, "ping", []*broker.Message{msg("loop")}), broker.CodeInvalid)
	})
}

func TestForwardDeadLetteredMessages(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("errors", broker.EntitySettings{})
		f.queue("q", broker.EntitySettings{ForwardDeadLetteredMessagesTo: "errors", MaxDeliveryCount: 1, LockDuration: time.Second})
		f.sendN("q", 2)
		m := f.receiveOne("q")
		err := f.e.Settle(f.ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "q", Token: m.LockToken, Reason: "r", Description: "d"})
		if err != nil {
			t.Fatal(err)
		}
		f.receiveOne("q")
		f.advance(time.Second) // max delivery reached: dead-lettered by the broker, forwarded too
		f.wantCounts("q", broker.Counts{})
		if c := f.counts("q"); c.SizeBytes != 0 {
			t.Fatalf("source size = %d, want 0", c.SizeBytes)
		}
		got := f.browse("errors", broker.CategoryActive)
		if !slices.Equal(idsOf(got), []string{"m1", "m2"}) {
			t.Fatalf("forwarded = %v", idsOf(got))
		}
		if got[0].DeadLetterSource != "q" || got[0].DeadLetterReason() != "r" || got[0].DeadLetterErrorDescription() != "d" {
			t.Fatalf("first: source %q reason %q desc %q", got[0].DeadLetterSource, got[0].DeadLetterReason(), got[0].DeadLetterErrorDescription())
		}
		if got[1].DeadLetterReason() != broker.ReasonMaxDeliveryCountExceeded {
			t.Fatalf("second reason %q", got[1].DeadLetterReason())
		}
		// A missing target puts the message in the source's transfer DLQ.
		if err := f.e.DeleteEntity(f.ctx, "errors"); err != nil {
			t.Fatal(err)
		}
		f.sendN("q", 1)
		m = f.receiveOne("q")
		f.mustSettle(broker.DeadLetter, "q", m)
		f.wantCounts("q", broker.Counts{TransferDeadLettered: 1})
	})
}

func TestQuotas(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxMessageSizeInKilobytes: 1, MaxSizeInMegabytes: 1})
		big := &broker.Message{MessageID: "big", Body: make([]byte, 1024)} // 1024+3 bytes > 1 KB
		err := f.e.Send(f.ctx, "q", []*broker.Message{msg("ok"), big})
		be := wantCode(t, err, broker.CodeMessageTooLarge)
		if be.Retryable() {
			t.Fatal("message too large must not be retryable")
		}
		f.wantCounts("q", broker.Counts{}) // the whole batch was refused
		// Each message counts its body and the 36-byte GUID the broker
		// gives it as MessageId: 1,024 bytes.
		body := make([]byte, 988)
		var batch []*broker.Message
		for range 1024 {
			batch = append(batch, &broker.Message{Body: body})
		}
		f.send("q", batch...) // 1,048,576 bytes of 1,048,576
		err = f.e.Send(f.ctx, "q", []*broker.Message{{Body: body}})
		be = wantCode(t, err, broker.CodeQuotaExceeded)
		if !be.Retryable() || !errors.Is(err, broker.ErrQuotaExceeded) {
			t.Fatalf("quota exceeded must be retryable: %v", err)
		}
		f.wantCounts("q", broker.Counts{Active: 1024})
		// Draining makes room again.
		f.mustSettle(broker.Complete, "q", f.receiveOne("q"))
		f.send("q", &broker.Message{Body: body})
		f.wantCounts("q", broker.Counts{Active: 1024})
		if c := f.counts("q"); c.SizeBytes != 1048576 {
			t.Fatalf("size = %d", c.SizeBytes)
		}
	})
}

func TestMessageSizeApproximation(t *testing.T) {
	m := &broker.Message{MessageID: "id", Subject: "subj", Body: bytes.Repeat([]byte{1}, 10),
		ApplicationProperties: map[string]any{"s": "abc", "i": int32(1), "b": true, "x": []byte{1, 2}}}
	// body 10 + "id" 2 + "subj" 4 + (1+3) + (1+4) + (1+1) + (1+2)
	if got, want := broker.MessageSize(m), int64(10+2+4+4+5+2+3); got != want {
		t.Fatalf("size = %d, want %d", got, want)
	}
}

// TestSendOwnedKeepsTheMessage checks that SendOwned stores the messages it
// is handed without copying them, cleared of what the broker sets as Send
// clears a copy, while Send leaves the caller's message as it was.
func TestSendOwnedKeepsTheMessage(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{DefaultMessageTimeToLive: time.Hour})
		forged := func() *broker.Message {
			return &broker.Message{Body: []byte("x"), SequenceNumber: 99, DeliveryCount: 5,
				LockToken: broker.LockToken{1}, State: broker.StateDeferred, DeadLetterSource: "elsewhere"}
		}
		sent := forged()
		if err := f.e.Send(f.ctx, "q", []*broker.Message{sent}); err != nil {
			t.Fatal(err)
		}
		if sent.MessageID != "" || sent.SequenceNumber != 99 {
			t.Fatalf("Send changed the caller's message: id %q seq %d", sent.MessageID, sent.SequenceNumber)
		}
		owned := forged()
		if err := f.e.SendOwned(f.ctx, "q", []*broker.Message{owned}); err != nil {
			t.Fatal(err)
		}
		if owned.MessageID == "" || owned.SequenceNumber != 2 || owned.State != broker.StateActive {
			t.Fatalf("SendOwned did not take the message itself: id %q seq %d state %v", owned.MessageID, owned.SequenceNumber, owned.State)
		}
		got := f.receive("q", 2)
		if len(got) != 2 {
			t.Fatalf("received %d messages, want 2", len(got))
		}
		for _, m := range got {
			if m.DeliveryCount != 1 || m.DeadLetterSource != "" || m.MessageID == "" {
				t.Fatalf("message %d kept what the sender forged: delivery count %d, dead-letter source %q, id %q",
					m.SequenceNumber, m.DeliveryCount, m.DeadLetterSource, m.MessageID)
			}
		}
		if got[1].MessageID != owned.MessageID {
			t.Fatalf("stored id %q, the handed-over message has %q", got[1].MessageID, owned.MessageID)
		}
	})
}
