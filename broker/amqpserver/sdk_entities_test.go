package amqpserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

func TestSDKTopicsAndSubscriptions(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	ctx := testCtx(t, 30*time.Second)
	env.create(redTopic()...)
	c := env.client()
	snd, _ := c.NewSender("t", nil)
	for _, subj := range []string{"red", "blue"} {
		if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte(subj), Subject: ptr(subj)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := c.NewReceiverForSubscription("t", "all", nil)
	if got := bodies(receiveN(t, all, 2)); !slices.Equal(got, []string{"red", "blue"}) {
		t.Fatalf("subscription all got %v", got)
	}
	red, _ := c.NewReceiverForSubscription("t", "red", nil)
	m := receiveN(t, red, 1)[0]
	if string(m.Body) != "red" {
		t.Fatalf("subscription red got %q", m.Body)
	}
	if err := red.DeadLetterMessage(ctx, m, &azservicebus.DeadLetterOptions{Reason: ptr("why")}); err != nil {
		t.Fatal(err)
	}
	dlq, _ := c.NewReceiverForSubscription("t", "red", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	peeked, err := dlq.PeekMessages(ctx, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(peeked) != 1 || *peeked[0].DeadLetterReason != "why" {
		t.Fatalf("peek of the subscription's dead-letter queue: %d messages", len(peeked))
	}
	// A topic cannot be received from.
	_, err = c.NewReceiverForQueue("t", nil)
	if err == nil {
		rcv, _ := c.NewReceiverForQueue("t", nil)
		_, err = rcv.ReceiveMessages(ctx, 1, nil)
	}
	if err == nil || !strings.Contains(err.Error(), "amqp:not-allowed") {
		t.Fatalf("receive from a topic: %v", err)
	}
}

func TestSDKSessions(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("s", broker.EntitySettings{RequiresSession: true})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("s", nil)
	for _, m := range []struct{ sid, body string }{{"a", "a1"}, {"b", "b1"}, {"a", "a2"}} {
		if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte(m.body), SessionID: ptr(m.sid)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A non-session receiver is refused.
	plain, _ := c.NewReceiverForQueue("s", nil)
	if _, err := plain.ReceiveMessages(ctx, 1, nil); err == nil || !strings.Contains(err.Error(), "requires sessions") {
		t.Fatalf("non-session receive on a session queue: %v", err)
	}
	sa, err := c.AcceptSessionForQueue(ctx, "s", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if sa.SessionID() != "a" || sa.LockedUntil().Before(time.Now()) {
		t.Fatalf("session %q locked until %v", sa.SessionID(), sa.LockedUntil())
	}
	// The same session cannot be accepted twice.
	c2 := env.client()
	_, err = c2.AcceptSessionForQueue(ctx, "s", "a", nil)
	if err == nil || !strings.Contains(err.Error(), "session-cannot-be-locked") {
		t.Fatalf("second accept of session a: %v", err)
	}
	got, err := sa.ReceiveMessages(ctx, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := bodies(got); !slices.Equal(b, []string{"a1", "a2"}) || *got[0].SessionID != "a" {
		t.Fatalf("session a got %v", b)
	}
	if err := sa.SetSessionState(ctx, []byte("state-1"), nil); err != nil {
		t.Fatal(err)
	}
	state, err := sa.GetSessionState(ctx, nil)
	if err != nil || string(state) != "state-1" {
		t.Fatalf("session state %q, %v", state, err)
	}
	before := sa.LockedUntil()
	time.Sleep(5 * time.Millisecond)
	if err := sa.RenewSessionLock(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if !sa.LockedUntil().After(before) {
		t.Fatalf("renewed session lock %v, not after %v", sa.LockedUntil(), before)
	}
	if err := sa.DeferMessage(ctx, got[1], nil); err != nil {
		t.Fatal(err)
	}
	def, err := sa.ReceiveDeferredMessages(ctx, []int64{*got[1].SequenceNumber}, nil)
	if err != nil || len(def) != 1 || string(def[0].Body) != "a2" {
		t.Fatalf("deferred in session: %v %v", def, err)
	}
	for _, m := range []*azservicebus.ReceivedMessage{got[0], def[0]} {
		if err := sa.CompleteMessage(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The next available session is b.
	sb, err := c.AcceptNextSessionForQueue(ctx, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if sb.SessionID() != "b" {
		t.Fatalf("next session %q, want b", sb.SessionID())
	}
	pager := c.NewListSessionsForQueuePager("s", nil)
	var ids []string
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, page.Sessions...)
	}
	if !slices.Equal(ids, []string{"a", "b"}) {
		t.Fatalf("sessions %v, want [a b] (a has state, b a message)", ids)
	}
	if err := sa.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Closing the receiver released session a.
	again, err := c2.AcceptSessionForQueue(ctx, "s", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = again.Close(ctx)
	// No other session has messages: accepting the next one times out.
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = c2.AcceptNextSessionForQueue(short, "s", nil)
	if sbCode(err) != azservicebus.CodeTimeout {
		t.Fatalf("accept next with no free session: %v", err)
	}
}

func TestSDKRefusals(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{MaxMessageSizeInKilobytes: 1})
	ctx := testCtx(t, 30*time.Second)

	bad := env.clientWith(DefaultKeyName, "wrong-key")
	snd, _ := bad.NewSender("q", nil)
	err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	if sbCode(err) != azservicebus.CodeUnauthorizedAccess {
		t.Fatalf("wrong key: %v", err)
	}
	unknown := env.clientWith("nobody", DefaultKey)
	snd, _ = unknown.NewSender("q", nil)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil); sbCode(err) != azservicebus.CodeUnauthorizedAccess {
		t.Fatalf("unknown key name: %v", err)
	}

	c := env.client()
	snd, _ = c.NewSender("missing", nil)
	err = snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	// The put-token for a missing entity answers 404, which the SDK
	// turns into its not-found code (as against Service Bus).
	if sbCode(err) != azservicebus.CodeNotFound || !strings.Contains(err.Error(), "status code 404") ||
		!strings.Contains(err.Error(), "The messaging entity '") || !strings.Contains(err.Error(), "TrackingId:") {
		t.Fatalf("unknown entity: %v", err)
	}
	snd, _ = c.NewSender("q", nil)
	err = snd.SendMessage(ctx, &azservicebus.Message{Body: make([]byte, 2048)}, nil)
	if !errors.Is(err, azservicebus.ErrMessageTooLarge) {
		t.Fatalf("oversized message: %v", err)
	}
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("fits")}, nil); err != nil {
		t.Fatalf("a message that fits after a refusal: %v", err)
	}
}

// TestSDKClosedSessionIsFreeAtOnce checks that a session receiver's Close
// gives its session back before it returns: another client accepts the
// same session right after, twenty times over.
func TestSDKClosedSessionIsFreeAtOnce(t *testing.T) {
	env := anonymousEnv(t)
	env.queue("s", broker.EntitySettings{RequiresSession: true})
	ctx := testCtx(t, 60*time.Second)
	snd, _ := env.client().NewSender("s", nil)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x"), SessionID: ptr("a")}, nil); err != nil {
		t.Fatal(err)
	}
	clients := []*azservicebus.Client{env.client(), env.client()}
	for i := range 20 {
		sr, err := clients[i%2].AcceptSessionForQueue(ctx, "s", "a", nil)
		if err != nil {
			t.Fatalf("round %d: accept right after the other client closed its receiver: %v", i, err)
		}
		if err := sr.Close(ctx); err != nil {
			t.Fatalf("round %d: close: %v", i, err)
		}
	}
}
