package amqpserver

import (
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// What rhea (the AMQP library of the official JavaScript SDK) says
// differently from go-amqp, pinned without Node.js; jssdk_test.go runs the
// SDK itself.

// TestCBSReplyToLinkName: rhea attaches its $cbs receiver with the reply-to
// as link name and no target address; the responses go to that link.
func TestCBSReplyToLinkName(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{IdleTimeout: -1})
	env.queue("q", broker.EntitySettings{})
	s := env.anonymousSession()
	ctx := testCtx(t, 10*time.Second)
	name := "cbs-" + uuid.NewString()
	snd, err := s.NewSender(ctx, "$cbs", nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "$cbs", &amqp.ReceiverOptions{Name: name, Credit: 10})
	if err != nil {
		t.Fatalf("a $cbs receiver without target address: %v", err)
	}
	aud := "amqp://" + env.addr + "/q"
	msg := &amqp.Message{
		Properties:            &amqp.MessageProperties{MessageID: "req-1", ReplyTo: &name},
		ApplicationProperties: map[string]any{"operation": "put-token", "type": TokenTypeSAS, "name": aud, "expiration": "0"},
		Value:                 sas.Sign(aud, DefaultKeyName, DefaultKey, time.Now().Add(time.Hour)),
	}
	if err := snd.Send(ctx, msg, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Properties == nil || resp.Properties.CorrelationID != "req-1" || resp.ApplicationProperties["status-code"] != int32(202) {
		t.Fatalf("response %+v %v", resp.Properties, resp.ApplicationProperties)
	}
	// A second receiver with the same link name cannot take the replies.
	if _, err := s.NewReceiver(ctx, "$cbs", &amqp.ReceiverOptions{Name: name}); err == nil {
		t.Fatal("a second link with the same reply address was accepted")
	}
}

// TestSessionFilterEchoedInTheClientsForm: rhea sends the session filter
// as a bare string (or null for the next session) and compares the bare
// value of the answer; go-amqp sends and reads a described value.
func TestSessionFilterEchoedInTheClientsForm(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{AllowAnonymous: true})
	env.queue("sq", broker.EntitySettings{RequiresSession: true})
	ctx := testCtx(t, 10*time.Second)
	if err := env.eng.Send(ctx, "sq", []*broker.Message{{SessionID: "b", Body: []byte("b1")}}); err != nil {
		t.Fatal(err)
	}
	// Each case keeps its connection, and so its session lock, to the end.
	described := wire.Described{Descriptor: sbamqp.SessionFilterCode, Value: "c"}
	for i, tc := range []struct {
		name      string
		asked     any
		wantValue any
	}{
		{"bare id", "a", "a"},
		{"bare null: next session", nil, "b"},
		{"described id", described, described},
	} {
		c := env.raw()
		c.open(&wire.Open{ContainerID: "raw"})
		c.begin(0)
		c.frame(0, &wire.Attach{Name: "r", Handle: uint32(i), Role: wire.RoleReceiver, RcvSettleMode: wire.Some(wire.ReceiverSettleSecond),
			Source: &wire.Source{Address: "sq", Filter: wire.Map{{Key: sessionFilterName, Value: tc.asked}}}, Target: &wire.Target{Address: "me"}})
		a, ok := c.read().Body.(*wire.Attach)
		if !ok || a.Source == nil {
			t.Fatalf("%s: want an attach with a source, got %+v", tc.name, a)
		}
		got, _ := a.Source.Filter.Get(string(sessionFilterName))
		if got != tc.wantValue {
			t.Errorf("%s: session filter answered %#v, want %#v", tc.name, got, tc.wantValue)
		}
	}
}

// TestCopyFilterKeepsBareValues: the link keeps bare and described filter
// values of simple kinds, in their form, and drops others.
func TestCopyFilterKeepsBareValues(t *testing.T) {
	in := wire.Map{
		{Key: wire.Symbol("bare"), Value: "x"},
		{Key: wire.Symbol("null"), Value: nil},
		{Key: wire.Symbol("described"), Value: wire.Described{Descriptor: uint64(7), Value: int64(3)}},
		{Key: wire.Symbol("list"), Value: []any{"no"}},
		{Key: wire.Symbol("described list"), Value: wire.Described{Descriptor: uint64(7), Value: []any{"no"}}},
	}
	got := copyFilter(in)
	want := wire.Map{in[0], in[1], in[2]}
	if len(got) != len(want) {
		t.Fatalf("copyFilter = %#v, want %#v", got, want)
	}
	for i := range want {
		if got[i].Key != want[i].Key || got[i].Value != want[i].Value {
			t.Errorf("copyFilter[%d] = %#v, want %#v", i, got[i], want[i])
		}
	}
}
