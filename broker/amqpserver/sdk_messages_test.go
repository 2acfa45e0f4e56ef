package amqpserver

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// receiveN receives exactly n messages or fails the test.
func receiveN(t *testing.T, r *azservicebus.Receiver, n int) []*azservicebus.ReceivedMessage {
	t.Helper()
	ctx := testCtx(t, 20*time.Second)
	var out []*azservicebus.ReceivedMessage
	for len(out) < n {
		msgs, err := r.ReceiveMessages(ctx, n-len(out), nil)
		if err != nil {
			t.Fatalf("receive: %v (have %d of %d)", err, len(out), n)
		}
		out = append(out, msgs...)
	}
	return out
}

func bodies(ms []*azservicebus.ReceivedMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Body))
	}
	return out
}

func sbCode(err error) azservicebus.Code {
	var e *azservicebus.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestSDKBatchAndOrder(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	batch, err := snd.NewMessageBatch(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := batch.AddMessage(&azservicebus.Message{Body: fmt.Appendf(nil, "b%d", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := snd.SendMessageBatch(ctx, batch, nil); err != nil {
		t.Fatal(err)
	}
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("single"), ApplicationProperties: map[string]any{"n": int64(7), "s": "x"}}, nil); err != nil {
		t.Fatal(err)
	}
	rcv, _ := c.NewReceiverForQueue("q", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	got := receiveN(t, rcv, 6)
	want := []string{"b0", "b1", "b2", "b3", "b4", "single"}
	if !slices.Equal(bodies(got), want) {
		t.Fatalf("bodies %v, want %v", bodies(got), want)
	}
	for i, m := range got {
		if *m.SequenceNumber != int64(i+1) {
			t.Errorf("message %d: sequence number %d", i, *m.SequenceNumber)
		}
		if m.LockToken != [16]byte{} {
			t.Errorf("receive-and-delete message %d has a lock token", i)
		}
	}
	if got[5].ApplicationProperties["n"] != int64(7) || got[5].ApplicationProperties["s"] != "x" {
		t.Errorf("application properties %v", got[5].ApplicationProperties)
	}
	ent, _ := env.eng.Entity(ctx, "q")
	if ent.Counts.Active != 0 {
		t.Errorf("receive-and-delete left %d active", ent.Counts.Active)
	}
}

func TestSDKScheduleAndCancel(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	// The fake clock jumps past the idle timeout: no heartbeats then.
	env := newEnv(t, engine.Options{Clock: clock}, Options{IdleTimeout: -1})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	at := clock.Now().Add(time.Minute)
	seqs, err := snd.ScheduleMessages(ctx, []*azservicebus.Message{{Body: []byte("s1")}, {Body: []byte("s2")}}, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seqs, []int64{1, 2}) {
		t.Fatalf("sequence numbers %v", seqs)
	}
	if err := snd.CancelScheduledMessages(ctx, []int64{seqs[0]}, nil); err != nil {
		t.Fatal(err)
	}
	err = snd.CancelScheduledMessages(ctx, []int64{99}, nil)
	if err == nil {
		t.Fatal("cancel of an unknown sequence number succeeded")
	}
	ent, _ := env.eng.Entity(ctx, "q")
	if ent.Counts.Scheduled != 1 || ent.Counts.Active != 0 {
		t.Fatalf("counts %+v", ent.Counts)
	}
	clock.Advance(2 * time.Minute)
	env.eng.Tick()
	rcv, _ := c.NewReceiverForQueue("q", nil)
	got := receiveN(t, rcv, 1)
	if string(got[0].Body) != "s2" || got[0].ScheduledEnqueueTime == nil || !got[0].ScheduledEnqueueTime.Equal(at.Truncate(time.Millisecond)) {
		t.Fatalf("got %q scheduled %v, want s2 at %v", got[0].Body, got[0].ScheduledEnqueueTime, at)
	}
}

func TestSDKAbandonDeferDeadLetter(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	for _, b := range []string{"a", "d", "x"} {
		if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte(b)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rcv, _ := c.NewReceiverForQueue("q", nil)
	got := receiveN(t, rcv, 3)
	if err := rcv.AbandonMessage(ctx, got[0], &azservicebus.AbandonMessageOptions{PropertiesToModify: map[string]any{"tried": int64(1)}}); err != nil {
		t.Fatal(err)
	}
	if err := rcv.DeferMessage(ctx, got[1], nil); err != nil {
		t.Fatal(err)
	}
	if err := rcv.DeadLetterMessage(ctx, got[2], &azservicebus.DeadLetterOptions{Reason: ptr("bad"), ErrorDescription: ptr("cannot parse"),
		PropertiesToModify: map[string]any{"stage": "parse"}}); err != nil {
		t.Fatal(err)
	}
	// The abandoned one comes back with its delivery count raised and the
	// modified property.
	again := receiveN(t, rcv, 1)
	if string(again[0].Body) != "a" || again[0].DeliveryCount != 2 || again[0].ApplicationProperties["tried"] != int64(1) {
		t.Fatalf("abandoned message came back as %q, delivery count %d, properties %v", again[0].Body, again[0].DeliveryCount, again[0].ApplicationProperties)
	}
	if err := rcv.CompleteMessage(ctx, again[0], nil); err != nil {
		t.Fatal(err)
	}
	// The deferred one by sequence number, settled on the management link.
	def, err := rcv.ReceiveDeferredMessages(ctx, []int64{*got[1].SequenceNumber}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(def) != 1 || string(def[0].Body) != "d" || def[0].State != azservicebus.MessageStateDeferred || def[0].LockToken == [16]byte{} {
		t.Fatalf("deferred: %+v", def)
	}
	if err := rcv.RenewMessageLock(ctx, def[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := rcv.CompleteMessage(ctx, def[0], nil); err != nil {
		t.Fatal(err)
	}
	// The dead-lettered one, from the dead-letter queue.
	dlq, _ := c.NewReceiverForQueue("q", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	dl := receiveN(t, dlq, 1)
	if string(dl[0].Body) != "x" || dl[0].DeadLetterReason == nil || *dl[0].DeadLetterReason != "bad" ||
		dl[0].DeadLetterErrorDescription == nil || *dl[0].DeadLetterErrorDescription != "cannot parse" || dl[0].ApplicationProperties["stage"] != "parse" {
		t.Fatalf("dead-lettered: body %q reason %v description %v properties %v", dl[0].Body, dl[0].DeadLetterReason, dl[0].DeadLetterErrorDescription, dl[0].ApplicationProperties)
	}
	if err := dlq.CompleteMessage(ctx, dl[0], nil); err != nil {
		t.Fatal(err)
	}
	ent, _ := env.eng.Entity(ctx, "q")
	if ent.Counts != (broker.Counts{}) {
		t.Fatalf("counts at the end %+v", ent.Counts)
	}
}

func TestSDKRenewAndLockExpiry(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	env := newEnv(t, engine.Options{Clock: clock}, Options{})
	env.queue("q", broker.EntitySettings{LockDuration: 10 * time.Second})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("m")}, nil); err != nil {
		t.Fatal(err)
	}
	rcv, _ := c.NewReceiverForQueue("q", nil)
	m := receiveN(t, rcv, 1)[0]
	if want := clock.Now().Add(10 * time.Second).Truncate(time.Millisecond); !m.LockedUntil.Equal(want) {
		t.Fatalf("locked until %v, want %v", m.LockedUntil, want)
	}
	clock.Advance(5 * time.Second)
	if err := rcv.RenewMessageLock(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().Add(10 * time.Second).Truncate(time.Millisecond); !m.LockedUntil.Equal(want) {
		t.Fatalf("renewed until %v, want %v", m.LockedUntil, want)
	}
	clock.Advance(11 * time.Second)
	env.eng.Tick()
	err := rcv.CompleteMessage(ctx, m, nil)
	if sbCode(err) != azservicebus.CodeLockLost {
		t.Fatalf("complete after expiry: %v, want code %q", err, azservicebus.CodeLockLost)
	}
	err = rcv.RenewMessageLock(ctx, m, nil)
	if sbCode(err) != azservicebus.CodeLockLost {
		t.Fatalf("renew after expiry: %v, want code %q", err, azservicebus.CodeLockLost)
	}
	again := receiveN(t, rcv, 1)[0]
	if again.DeliveryCount != 2 || *again.SequenceNumber != *m.SequenceNumber {
		t.Fatalf("redelivered with count %d seq %d", again.DeliveryCount, *again.SequenceNumber)
	}
	if err := rcv.CompleteMessage(ctx, again, nil); err != nil {
		t.Fatal(err)
	}
}

// TestSDKLockExpiryRealTime runs lock expiry on the real clock.
func TestSDKLockExpiryRealTime(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{LockDuration: time.Second})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("m")}, nil); err != nil {
		t.Fatal(err)
	}
	rcv, _ := c.NewReceiverForQueue("q", nil)
	m := receiveN(t, rcv, 1)[0]
	time.Sleep(1500 * time.Millisecond)
	if err := rcv.CompleteMessage(ctx, m, nil); sbCode(err) != azservicebus.CodeLockLost {
		t.Fatalf("complete after expiry: %v", err)
	}
}

func TestSDKPeekPaging(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	for i := range 7 {
		if err := snd.SendMessage(ctx, &azservicebus.Message{Body: fmt.Appendf(nil, "p%d", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rcv, _ := c.NewReceiverForQueue("q", nil)
	// Lock one and defer another: peek sees every state.
	locked := receiveN(t, rcv, 2)
	if err := rcv.DeferMessage(ctx, locked[1], nil); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for range 4 {
		page, err := rcv.PeekMessages(ctx, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		seen = append(seen, bodies(page)...)
	}
	want := []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6"}
	if !slices.Equal(seen, want) {
		t.Fatalf("peeked %v, want %v", seen, want)
	}
	page, err := rcv.PeekMessages(ctx, 2, &azservicebus.PeekMessagesOptions{FromSequenceNumber: ptr[int64](2)})
	if err != nil {
		t.Fatal(err)
	}
	if got := bodies(page); !slices.Equal(got, []string{"p1", "p2"}) || page[0].State != azservicebus.MessageStateDeferred || page[0].DeliveryCount != 2 { // the deferral counted
		t.Fatalf("peek from 2: %v state %v count %d", got, page[0].State, page[0].DeliveryCount)
	}
	// Peeking changed nothing.
	ent, _ := env.eng.Entity(ctx, "q")
	if ent.Counts.Active != 5 || ent.Counts.Locked != 1 || ent.Counts.Deferred != 1 {
		t.Fatalf("counts after peek %+v", ent.Counts)
	}
}

func TestSDKDuplicateDetection(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{RequiresDuplicateDetection: true})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	for _, b := range []string{"first", "second"} {
		if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte(b), MessageID: ptr("same")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rcv, _ := c.NewReceiverForQueue("q", nil)
	got := receiveN(t, rcv, 1)
	if string(got[0].Body) != "first" {
		t.Fatalf("got %q", got[0].Body)
	}
	ent, _ := env.eng.Entity(ctx, "q")
	if ent.Counts.Active != 0 || ent.Counts.Locked != 1 {
		t.Fatalf("the duplicate was stored: %+v", ent.Counts)
	}
}
