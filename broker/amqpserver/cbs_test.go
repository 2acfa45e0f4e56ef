package amqpserver

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

// rpcClient sends requests to a node and reads the responses, as the SDKs
// do: a sender to the node and a receiver whose target is the reply
// address.
type rpcClient struct {
	t     *testing.T
	snd   *amqp.Sender
	rcv   *amqp.Receiver
	reply string
}

func newRPC(t *testing.T, s *amqp.Session, node string) *rpcClient {
	t.Helper()
	ctx := testCtx(t, 10*time.Second)
	reply := node + "-reply-to-" + uuid.NewString()
	snd, err := s.NewSender(ctx, node, nil)
	if err != nil {
		t.Fatalf("sender to %s: %v", node, err)
	}
	rcv, err := s.NewReceiver(ctx, node, &amqp.ReceiverOptions{TargetAddress: reply, Credit: 10,
		SettlementMode: amqp.ReceiverSettleModeFirst.Ptr(), RequestedSenderSettleMode: amqp.SenderSettleModeSettled.Ptr()})
	if err != nil {
		t.Fatalf("receiver from %s: %v", node, err)
	}
	return &rpcClient{t: t, snd: snd, rcv: rcv, reply: reply}
}

// call sends one request and returns the response's status code,
// description and value.
func (r *rpcClient) call(props map[string]any, value any) (int32, string, any) {
	r.t.Helper()
	resp := r.roundTrip(props, value)
	code, ok := resp.ApplicationProperties["status-code"].(int32)
	if !ok {
		code, ok = resp.ApplicationProperties["statusCode"].(int32)
	}
	if !ok {
		r.t.Fatalf("no int32 status code in %v", resp.ApplicationProperties)
	}
	desc, _ := resp.ApplicationProperties["status-description"].(string)
	if d, ok := resp.ApplicationProperties["statusDescription"].(string); ok {
		desc = d
	}
	return code, desc, resp.Value
}

// roundTrip sends one request and returns the response, correlated to it.
func (r *rpcClient) roundTrip(props map[string]any, value any) *amqp.Message {
	r.t.Helper()
	ctx := testCtx(r.t, 10*time.Second)
	id := uuid.NewString()
	msg := &amqp.Message{Properties: &amqp.MessageProperties{MessageID: id, ReplyTo: &r.reply}, ApplicationProperties: props, Value: value}
	if err := r.snd.Send(ctx, msg, nil); err != nil {
		r.t.Fatal(err)
	}
	resp, err := r.rcv.Receive(ctx, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	if resp.Properties == nil || resp.Properties.CorrelationID != id {
		r.t.Fatalf("response correlation %+v, want %s", resp.Properties, id)
	}
	return resp
}

// anonymousSession opens a connection with SASL ANONYMOUS (no access
// without tokens) and a session.
func (e *testEnv) anonymousSession() *amqp.Session {
	e.t.Helper()
	return newAMQPSession(e.t, e.anonymousConn())
}

// anonymousConn opens a connection with SASL ANONYMOUS.
func (e *testEnv) anonymousConn() *amqp.Conn {
	e.t.Helper()
	ctx := testCtx(e.t, 10*time.Second)
	conn, err := amqp.Dial(ctx, "amqp://"+e.addr, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous(), HostName: e.addr})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func newAMQPSession(t *testing.T, conn *amqp.Conn) *amqp.Session {
	t.Helper()
	s, err := conn.NewSession(testCtx(t, 10*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func putToken(r *rpcClient, audience, token string) (int32, string) {
	code, desc, _ := r.call(map[string]any{"operation": "put-token", "type": TokenTypeSAS, "name": audience, "expiration": "0"}, token)
	return code, desc
}

func TestCBSPutToken(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	env := newEnv(t, engine.Options{Clock: clock}, Options{IdleTimeout: -1})
	env.queue("q", broker.EntitySettings{})
	env.queue("other", broker.EntitySettings{})
	conn := env.anonymousConn()
	s := newAMQPSession(t, conn)
	ctx := testCtx(t, 10*time.Second)
	cbs := newRPC(t, s, "$cbs")
	aud := func(p string) string { return "amqp://" + env.addr + "/" + p }
	in := clock.Now().Add(time.Hour)

	// Without a token, an entity link is refused.
	if _, err := s.NewSender(ctx, "q", nil); err == nil || !strings.Contains(err.Error(), "amqp:unauthorized-access") {
		t.Fatalf("attach without a token: %v", err)
	}
	for name, tc := range map[string]struct {
		audience, token string
		code            int32
		desc            string
	}{
		"wrong key":     {aud("q"), sas.Sign(aud("q"), DefaultKeyName, "nope", in), 401, "signature"},
		"unknown name":  {aud("q"), sas.Sign(aud("q"), "who", DefaultKey, in), 401, "who"},
		"expired":       {aud("q"), sas.Sign(aud("q"), DefaultKeyName, DefaultKey, clock.Now().Add(-time.Minute)), 401, "expired"},
		"not covering":  {aud("q"), sas.Sign(aud("other"), DefaultKeyName, DefaultKey, in), 401, "cover"},
		"not a token":   {aud("q"), "hello", 401, ""},
		"entity token":  {aud("q"), sas.Sign(aud("q"), DefaultKeyName, DefaultKey, in), 202, "Accepted"},
		"renewed token": {aud("q"), sas.Sign(aud("q"), DefaultKeyName, DefaultKey, in.Add(time.Minute)), 202, "Accepted"},
	} {
		code, desc := putToken(cbs, tc.audience, tc.token)
		if code != tc.code || !strings.Contains(desc, tc.desc) {
			t.Errorf("%s: status %d %q, want %d containing %q", name, code, desc, tc.code, tc.desc)
		}
	}
	code, _, _ := cbs.call(map[string]any{"operation": "put-token", "type": "jwt", "name": aud("q")}, "eyJ...")
	if code != 401 {
		t.Errorf("jwt token: status %d", code)
	}
	// The entity token covers q and its sub-queues, not other.
	if _, err := s.NewSender(ctx, "q", nil); err != nil {
		t.Fatalf("attach with a token: %v", err)
	}
	if _, err := s.NewReceiver(ctx, "q/$DeadLetterQueue", nil); err != nil {
		t.Fatalf("dead-letter queue with the entity's token: %v", err)
	}
	if _, err := s.NewSender(ctx, "other", nil); err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("attach to another entity: %v", err)
	}
	// Once the token expires, new links are refused again. (The links
	// attached with it are detached: TestTokenExpiryDetachesLinks. A new
	// session keeps go-amqp from reusing the handles of those links
	// before its detach answers reach the listener.)
	clock.Advance(2 * time.Hour)
	s = newAMQPSession(t, conn)
	if _, err := s.NewSender(ctx, "q", nil); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("attach with an expired token: %v", err)
	}
	// A namespace token covers everything.
	if code, desc := putToken(cbs, aud(""), sas.Sign(aud(""), DefaultKeyName, DefaultKey, clock.Now().Add(time.Hour))); code != 202 {
		t.Fatalf("namespace token: %d %s", code, desc)
	}
	if _, err := s.NewSender(ctx, "other", nil); err != nil {
		t.Fatalf("attach with the namespace token: %v", err)
	}
}

func TestManagementErrors(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{AllowAnonymous: true})
	env.queue("q", broker.EntitySettings{})
	s := env.anonymousSession()
	mgmt := newRPC(t, s, "q/$management")
	for name, tc := range map[string]struct {
		props map[string]any
		value any
		code  int32
		desc  string
	}{
		"unknown operation": {map[string]any{"operation": "com.microsoft:frobnicate"}, nil, 501, "not supported"},
		"no operation":      {map[string]any{}, nil, 501, "not supported"},
		"body not a map":    {map[string]any{"operation": "com.microsoft:renew-lock"}, "x", 400, "want a map"},
		"no lock tokens":    {map[string]any{"operation": "com.microsoft:renew-lock"}, map[string]any{}, 400, "lock-tokens"},
		"unknown lock":      {map[string]any{"operation": "com.microsoft:renew-lock"}, map[string]any{"lock-tokens": []amqp.UUID{{1}}}, 410, "lock"},
		"bad status": {map[string]any{"operation": "com.microsoft:update-disposition"},
			map[string]any{"disposition-status": "done", "lock-tokens": []amqp.UUID{{1}}}, 400, "disposition-status"},
		"missing deferred": {map[string]any{"operation": "com.microsoft:receive-by-sequence-number"},
			map[string]any{"sequence-numbers": []int64{42}, "receiver-settle-mode": uint32(1)}, 404, "42"},
		"no scheduled": {map[string]any{"operation": "com.microsoft:cancel-scheduled-message"},
			map[string]any{"sequence-numbers": []int64{7}}, 404, "7"},
		"peek none": {map[string]any{"operation": "com.microsoft:peek-message"},
			map[string]any{"from-sequence-number": int64(1), "message-count": int32(5)}, 204, ""},
		"sessions of a plain queue": {map[string]any{"operation": "com.microsoft:get-message-sessions"},
			map[string]any{"skip": int32(0), "top": int32(10)}, 400, "does not require sessions"},
	} {
		code, desc, _ := mgmt.call(tc.props, tc.value)
		if code != tc.code || !strings.Contains(desc, tc.desc) {
			t.Errorf("%s: status %d %q, want %d containing %q", name, code, desc, tc.code, tc.desc)
		}
		if code >= 400 && !strings.Contains(desc, "TrackingId:") {
			t.Errorf("%s: description without a tracking id: %q", name, desc)
		}
	}
	// A management node of a missing entity is refused.
	ctx := testCtx(t, 10*time.Second)
	if _, err := s.NewSender(ctx, "missing/$management", nil); err == nil || !strings.Contains(err.Error(), "amqp:not-found") {
		t.Fatalf("management of a missing entity: %v", err)
	}
}
