package amqpserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	amqp "github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// setStatus changes an entity's status in the engine.
func (e *testEnv) setStatus(path string, st broker.EntityStatus) {
	e.t.Helper()
	ctx := context.Background()
	ent, err := e.eng.Entity(ctx, path)
	if err != nil {
		e.t.Fatal(err)
	}
	ent.Settings.Status = st
	if err := e.eng.UpdateEntity(ctx, ent); err != nil {
		e.t.Fatal(err)
	}
}

// wantEntityDisabled checks that the SDK surfaced Service Bus's
// com.microsoft:entity-disabled condition with its wording and a tracking
// id.
func wantEntityDisabled(t *testing.T, err error, what string) {
	t.Helper()
	var ae *amqp.Error
	if !errors.As(err, &ae) || ae.Condition != "com.microsoft:entity-disabled" ||
		!strings.Contains(ae.Description, "is currently disabled") || !strings.Contains(ae.Description, "TrackingId:") {
		t.Fatalf("%s: %v, want com.microsoft:entity-disabled", what, err)
	}
}

// TestSDKEntityStatus: the SDK's sender gets com.microsoft:entity-disabled
// from a SendDisabled queue, and its receiver from a ReceiveDisabled one,
// as errors it does not retry; peeking still works, and sends and receives
// work again once the queue is Active.
func TestSDKEntityStatus(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("before")}, nil); err != nil {
		t.Fatal(err)
	}

	env.setStatus("q", broker.StatusSendDisabled)
	wantEntityDisabled(t, snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil), "send to a SendDisabled queue")

	env.setStatus("q", broker.StatusReceiveDisabled)
	snd2, _ := c.NewSender("q", nil)
	if err := snd2.SendMessage(ctx, &azservicebus.Message{Body: []byte("while receive-disabled")}, nil); err != nil {
		t.Fatalf("send to a ReceiveDisabled queue: %v", err)
	}
	rcv, _ := c.NewReceiverForQueue("q", nil)
	_, err := rcv.ReceiveMessages(ctx, 1, nil)
	wantEntityDisabled(t, err, "receive from a ReceiveDisabled queue")
	peek, _ := c.NewReceiverForQueue("q", nil)
	if got, err := peek.PeekMessages(ctx, 5, nil); err != nil || len(got) != 2 {
		t.Fatalf("peek of a ReceiveDisabled queue: %d, %v", len(got), err)
	}

	env.setStatus("q", broker.StatusActive)
	rcv2, _ := c.NewReceiverForQueue("q", nil)
	if got := bodies(receiveN(t, rcv2, 2)); got[0] != "before" || got[1] != "while receive-disabled" {
		t.Fatalf("received %v", got)
	}
}

// TestSDKSessionReceiverSurvivesUpdate: an update of the queue while a
// session receiver holds its session leaves the receiver usable: session
// state, receive and complete work (the Go SDK's
// TestSessionReceiver_Detach).
func TestSDKSessionReceiverSurvivesUpdate(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("s", broker.EntitySettings{RequiresSession: true})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	sr, err := c.AcceptSessionForQueue(ctx, "s", "test-session", nil)
	if err != nil {
		t.Fatal(err)
	}
	snd, _ := c.NewSender("s", nil)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("hello"), SessionID: ptr("test-session")}, nil); err != nil {
		t.Fatal(err)
	}
	update := func() {
		t.Helper()
		if err := env.eng.UpdateEntity(ctx, broker.Entity{Path: "s", Kind: broker.KindQueue, Settings: broker.EntitySettings{RequiresSession: true}}); err != nil {
			t.Fatal(err)
		}
	}
	update()
	if state, err := sr.GetSessionState(ctx, nil); err != nil || state != nil {
		t.Fatalf("session state after an update: %q, %v", state, err)
	}
	update()
	got, err := sr.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("receive after an update: %d, %v", len(got), err)
	}
	if err := sr.CompleteMessage(ctx, got[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := sr.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
