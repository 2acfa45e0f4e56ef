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
	"github.com/peeklock/peeklock/broker/sas"
)

// What the official Go SDK's own live tests expect of Service Bus, pinned
// here against the listener with the SDK as the client.

// TestSDKBlankSessionID: the empty SessionId is a session of its own; a
// message sent or scheduled with it is received through AcceptSession with
// "" and keeps it (the SDK's TestSessionReceiver_blankSessionIDs).
func TestSDKBlankSessionID(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("sq", broker.EntitySettings{RequiresSession: true})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("sq", nil)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("sent"), SessionID: ptr("")}, nil); err != nil {
		t.Fatalf("send to session \"\": %v", err)
	}
	seqs, err := snd.ScheduleMessages(ctx, []*azservicebus.Message{{Body: []byte("scheduled"), SessionID: ptr("")}}, time.Now(), nil)
	if err != nil || len(seqs) != 1 {
		t.Fatalf("schedule to session \"\": %v, %v", seqs, err)
	}
	// A session that another session's messages do not satisfy.
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("other"), SessionID: ptr("x")}, nil); err != nil {
		t.Fatal(err)
	}
	rcv, err := c.AcceptSessionForQueue(ctx, "sq", "", nil)
	if err != nil {
		t.Fatalf("accept session \"\": %v", err)
	}
	if rcv.SessionID() != "" || rcv.LockedUntil().IsZero() {
		t.Fatalf("session %q locked until %v", rcv.SessionID(), rcv.LockedUntil())
	}
	if err := rcv.SetSessionState(ctx, []byte("s"), nil); err != nil {
		t.Fatalf("set state of session \"\": %v", err)
	}
	var bodies []string
	for len(bodies) < 2 {
		msgs, err := rcv.ReceiveMessages(ctx, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.SessionID == nil || *m.SessionID != "" {
				t.Fatalf("received SessionID %v", m.SessionID)
			}
			if err := rcv.CompleteMessage(ctx, m, nil); err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, string(m.Body))
		}
	}
	if bodies[0] != "sent" || bodies[1] != "scheduled" {
		t.Fatalf("received %q", bodies)
	}
	if n := env.counts("sq"); n.Active != 1 {
		t.Fatalf("counts %+v: session x's message should be left", n)
	}
}

// TestSDKNilBrokerAnnotations: an incoming message with null values of
// annotations the broker owns is accepted, and the broker's own values go
// out (the SDK's TestNilPartitionKey).
func TestSDKNilBrokerAnnotations(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	err := snd.SendAMQPAnnotatedMessage(ctx, &azservicebus.AMQPAnnotatedMessage{
		MessageAnnotations: map[any]any{
			"x-opt-partition-key": nil, "x-opt-deadletter-source": nil,
			"x-opt-locked-until": nil, "x-opt-sequence-number": nil, "x-opt-enqueued-time": nil,
		},
		Body: azservicebus.AMQPAnnotatedMessageBody{Value: "nil annotations"},
	}, nil)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	rcv, _ := c.NewReceiverForQueue("q", nil)
	msgs, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %v, %v", msgs, err)
	}
	m := msgs[0]
	if m.PartitionKey != nil || m.DeadLetterSource != nil || m.SequenceNumber == nil || *m.SequenceNumber != 1 ||
		m.LockedUntil == nil || m.EnqueuedTime == nil || m.RawAMQPMessage.Body.Value != "nil annotations" {
		t.Fatalf("received %+v", m)
	}
}

// TestSDKNonSessionReceiverNotAllowed: a receiver without a session on a
// session-aware queue is refused with amqp:not-allowed, which the SDK does
// not retry, in Service Bus's words (the SDK's
// TestSessionReceiver_nonSessionReceiver), for a receive and a peek alike.
func TestSDKNonSessionReceiverNotAllowed(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("sq", broker.EntitySettings{RequiresSession: true})
	ctx := testCtx(t, 30*time.Second)
	rcv, _ := env.client().NewReceiverForQueue("sq", nil)
	_, recvErr := rcv.ReceiveMessages(ctx, 1, nil)
	_, peekErr := rcv.PeekMessages(ctx, 1, nil)
	for op, err := range map[string]error{"receive": recvErr, "peek": peekErr} {
		var ae *amqp.Error
		if !errors.As(err, &ae) || ae.Condition != amqp.ErrCondNotAllowed ||
			!strings.Contains(ae.Description, "It is not possible for an entity that requires sessions to create a non-sessionful message receiver.") ||
			!strings.Contains(ae.Description, "TrackingId:") {
			t.Errorf("%s: %v", op, err)
		}
	}
}

// TestSDKNotFoundCode: a missing entity reaches the SDK as its not-found
// code, at once, for senders, receivers and session receivers alike: the
// put-token for it answers 404 as Service Bus does (the SDK's
// TestNewClientNewSenderNotFound, TestNewClientNewReceiverNotFound,
// TestClientNewSessionReceiverNotFound).
func TestSDKNotFoundCode(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.create(redTopic()...)
	c := env.client()
	ops := map[string]func(ctx context.Context) error{
		"send": func(ctx context.Context) error {
			snd, _ := c.NewSender("missing", nil)
			return snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
		},
		"receive": func(ctx context.Context) error {
			rcv, _ := c.NewReceiverForQueue("missing", nil)
			_, err := rcv.ReceiveMessages(ctx, 1, nil)
			return err
		},
		"peek subscription": func(ctx context.Context) error {
			rcv, _ := c.NewReceiverForSubscription("t", "missing", nil)
			_, err := rcv.PeekMessages(ctx, 1, nil)
			return err
		},
		"accept session": func(ctx context.Context) error {
			_, err := c.AcceptSessionForQueue(ctx, "missing", "s", nil)
			return err
		},
		"accept next session": func(ctx context.Context) error {
			_, err := c.AcceptNextSessionForQueue(ctx, "missing", nil)
			return err
		},
	}
	for name, op := range ops {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := op(ctx)
		cancel()
		if sbCode(err) != azservicebus.CodeNotFound || !strings.Contains(err.Error(), "status code 404 and description: The messaging entity '") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSDKLongIDsRefused: a MessageId, SessionId or PartitionKey longer than
// 128 characters is refused, whether sent or scheduled; nothing is stored.
func TestSDKLongIDsRefused(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	snd, _ := env.client().NewSender("q", nil)
	long := strings.Repeat("i", broker.MaxIDLength+1)
	for name, m := range map[string]*azservicebus.Message{
		"MessageId":    {MessageID: &long},
		"SessionId":    {SessionID: &long},
		"PartitionKey": {PartitionKey: &long},
	} {
		err := snd.SendMessage(ctx, m, nil)
		if err == nil || !strings.Contains(err.Error(), "has a "+name+" of 129 characters; Service Bus allows at most 128") || !strings.Contains(err.Error(), "TrackingId:") {
			t.Errorf("send with a long %s: %v", name, err)
		}
		_, err = snd.ScheduleMessages(ctx, []*azservicebus.Message{m}, time.Now().Add(time.Hour), nil)
		if err == nil || !strings.Contains(err.Error(), "status code 400") || !strings.Contains(err.Error(), name+" of 129 characters") {
			t.Errorf("schedule with a long %s: %v", name, err)
		}
	}
	if n := env.counts("q"); n != (broker.Counts{}) {
		t.Fatalf("counts %+v", n)
	}
}

// TestSDKServiceBusWording: lock lost and expired tokens come with Service
// Bus's words, which the SDK's TestReceiver_RenewMessageLock and the
// Expired SAS subtests check, and their tracking ids.
func TestSDKServiceBusWording(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("q", nil)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil); err != nil {
		t.Fatal(err)
	}
	rcv, _ := c.NewReceiverForQueue("q", nil)
	msgs, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 {
		t.Fatal(msgs, err)
	}
	msgs[0].LockToken = [16]byte{}
	err = rcv.RenewMessageLock(ctx, msgs[0], nil)
	if sbCode(err) != azservicebus.CodeLockLost || !strings.Contains(err.Error(),
		"status code 410 and description: The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue") ||
		!strings.Contains(err.Error(), "TrackingId:") {
		t.Errorf("renew a bogus lock: %v", err)
	}

	aud := "sb://" + env.addr + "/q"
	expired := sas.Sign(aud, DefaultKeyName, DefaultKey, time.Now().Add(-10*time.Minute))
	old, err := azservicebus.NewClientFromConnectionString("Endpoint=sb://"+env.addr+";SharedAccessSignature="+expired+";UseDevelopmentEmulator=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = old.Close(ctx) }()
	snd, _ = old.NewSender("q", nil)
	err = snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	if sbCode(err) != azservicebus.CodeUnauthorizedAccess ||
		!strings.Contains(err.Error(), "rpc: failed, status code 401 and description: ExpiredToken: The token is expired. Expiration time: '") ||
		!strings.Contains(err.Error(), "TrackingId:") {
		t.Errorf("send with an expired token: %v", err)
	}
}

// TestCBSOneLinkPairPerConnection: a connection has at most one sender and
// one receiver attached to $cbs, as on Service Bus, which refuses another
// with amqp:not-allowed (the SDK then opens a new connection: its
// TestAMQPLinksCBSLinkStillOpen); once the first is closed, a new one is
// taken.
func TestCBSOneLinkPairPerConnection(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	ctx := testCtx(t, 10*time.Second)
	conn, err := amqp.Dial(ctx, "amqp://"+env.addr, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous(), HostName: env.addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.NewSender(ctx, "$cbs", nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "$cbs", &amqp.ReceiverOptions{TargetAddress: "reply-1"})
	if err != nil {
		t.Fatal(err)
	}
	var ae *amqp.Error
	if _, err := s.NewSender(ctx, "$cbs", nil); !errors.As(err, &ae) || ae.Condition != amqp.ErrCondNotAllowed || !strings.Contains(ae.Description, "TrackingId:") {
		t.Fatalf("a second $cbs sender: %v", err)
	}
	if _, err := s.NewReceiver(ctx, "$cbs", &amqp.ReceiverOptions{TargetAddress: "reply-2"}); !errors.As(err, &ae) || ae.Condition != amqp.ErrCondNotAllowed {
		t.Fatalf("a second $cbs receiver: %v", err)
	}
	// On another session of the same connection too.
	other, err := conn.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.NewSender(ctx, "$cbs", nil); !errors.As(err, &ae) || ae.Condition != amqp.ErrCondNotAllowed {
		t.Fatalf("a $cbs sender on another session: %v", err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rcv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rpc := newRPC(t, other, "$cbs")
	tok := sas.Sign(aud(env, "q"), DefaultKeyName, DefaultKey, time.Now().Add(time.Hour))
	env.queue("q", broker.EntitySettings{})
	if code, desc := putToken(rpc, aud(env, "q"), tok); code != 202 {
		t.Fatalf("put-token on the new pair: %d %s", code, desc)
	}
}

func aud(env *testEnv, path string) string { return "sb://" + env.addr + "/" + path }
