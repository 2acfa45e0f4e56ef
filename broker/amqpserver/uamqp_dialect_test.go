package amqpserver

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// What Microsoft's C AMQP stack (uamqp, under the Python SDK) does that the
// other SDKs do not, frame by frame: the SASL mechanism MSSBCBS, requests
// without reply-to on $cbs and $management answered on the receiver the
// client attached on the node, with the request's message-id echoed with
// its type, and senders in rcv-settle-mode second. uamqp_test.go runs the
// SDK itself.

// saslMechanism runs the SASL exchange with mech and the open exchange.
func (c *rawClient) saslMechanism(mech wire.Symbol) {
	c.t.Helper()
	if h := c.header(wire.HeaderSASL); h != wire.HeaderSASL {
		c.t.Fatalf("header %+v", h)
	}
	c.read()
	b, _ := wire.AppendFrame(nil, wire.FrameSASL, 0, &wire.SASLInit{Mechanism: mech})
	c.write(b)
	if out, ok := c.read().Body.(*wire.SASLOutcome); !ok || out.Code != wire.SASLOK {
		c.t.Fatalf("outcome %+v", out)
	}
	c.open(&wire.Open{ContainerID: "uamqp"})
}

// attachNode attaches a sender and a receiver on a $cbs or $management
// node as uamqp does: both with the node as source and target, the
// receiver with credit.
func (c *rawClient) attachNode(sender, receiver uint32, node string) {
	c.t.Helper()
	c.frame(0, &wire.Attach{Name: node + "-sender", Handle: sender, Role: wire.RoleSender,
		Source: &wire.Source{Address: node}, Target: &wire.Target{Address: node}})
	c.frame(0, &wire.Attach{Name: node + "-receiver", Handle: receiver, Role: wire.RoleReceiver,
		Source: &wire.Source{Address: node}, Target: &wire.Target{Address: node}})
	for attached := 0; attached < 2; {
		if a, ok := c.read().Body.(*wire.Attach); ok {
			if a.Source == nil || a.Target == nil {
				c.t.Fatalf("%s refused: %+v", a.Name, a)
			}
			attached++
		}
	}
	c.frame(0, &wire.Flow{NextIncomingID: wire.Some[uint32](0), IncomingWindow: 1 << 20, OutgoingWindow: 100,
		Handle: wire.Some(receiver), DeliveryCount: wire.Some[uint32](0), LinkCredit: wire.Some[uint32](100)})
}

// uamqpRequest encodes a request as uamqp does: a message-id of its own
// type, no reply-to, application properties and an amqp-value body.
func uamqpRequest(t *testing.T, id any, props wire.Map, body any) []byte {
	t.Helper()
	b, err := wire.AppendList(wire.AppendDescriptor(nil, 0x73), []any{id}) // properties
	if err == nil {
		b, err = wire.AppendMap(wire.AppendDescriptor(b, 0x74), props) // application-properties
	}
	if err == nil {
		b, err = wire.AppendValue(wire.AppendDescriptor(b, 0x77), body) // amqp-value
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// request sends payload on handle as delivery id and returns the response
// that arrives on handle reply: its status and its correlation-id as
// decoded with its type.
func (c *rawClient) request(handle, id, reply uint32, payload []byte, statusKey string) (any, any) {
	c.t.Helper()
	c.frame(0, &wire.Transfer{Handle: handle, DeliveryID: wire.Some(id), DeliveryTag: []byte{byte(id)}, Payload: payload})
	for {
		tr, ok := c.read().Body.(*wire.Transfer)
		if !ok || tr.Handle != reply {
			continue
		}
		m, err := wire.DecodeMessage(tr.Payload)
		if err != nil {
			c.t.Fatal(err)
		}
		corr, _, err := wire.DecodeValue(wire.EncodedPropertiesField(tr.Payload, wire.FieldCorrelationID))
		if err != nil {
			c.t.Fatalf("response correlation-id: %v", err)
		}
		return m.ApplicationProperties[statusKey], corr
	}
}

// TestRawUAMQPRequestsWithoutReplyTo: put-token on $cbs with ulong
// message-id 0 and no reply-to is answered on the $cbs receiver, with
// correlation-id ulong 0; so are requests to $management, each
// correlation-id with its request's message-id type.
func TestRawUAMQPRequestsWithoutReplyTo(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.queue("q", broker.EntitySettings{})
	c := env.raw()
	c.saslMechanism(wire.MechanismMSSBCBS)
	c.begin(0)
	c.attachNode(0, 1, sbamqp.CBSAddress)
	put := uamqpRequest(t, uint64(0), wire.Map{
		{Key: sbamqp.PropName, Value: aud(env, "q")},
		{Key: sbamqp.PropOperation, Value: sbamqp.OpPutToken},
		{Key: sbamqp.PropType, Value: sbamqp.TokenTypeSAS},
	}, sasToken(env, "q", time.Now().Add(time.Hour)))
	status, corr := c.request(0, 0, 1, put, sbamqp.PropCBSStatusCode)
	if status != int32(202) || corr != uint64(0) {
		t.Fatalf("put-token: status %v, correlation-id %#v; want 202 and ulong 0", status, corr)
	}

	c.attachNode(2, 3, "q"+sbamqp.ManagementSuffix)
	peek := wire.Map{{Key: "from-sequence-number", Value: int64(1)}, {Key: "message-count", Value: int32(1)}}
	for i, id := range []any{uint64(7), wire.UUID{0: 9, 15: 9}, []byte{1, 2, 3}, "request-4"} {
		req := uamqpRequest(t, id, wire.Map{{Key: sbamqp.PropOperation, Value: sbamqp.OpPeekMessage}}, peek)
		status, corr := c.request(2, uint32(i+1), 3, req, sbamqp.PropStatusCode)
		if status != int32(204) || !reflect.DeepEqual(corr, id) {
			t.Errorf("peek with message-id %#v: status %v, correlation-id %#v; want 204 and the same id", id, status, corr)
		}
	}
}

// TestRawRequestWithoutReplyToOtherSession: a request without reply-to in
// a session without a receiver on its node is answered on the client's
// receiver of the node in another session.
func TestRawRequestWithoutReplyToOtherSession(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.queue("q", broker.EntitySettings{})
	c := env.raw()
	c.saslMechanism(wire.MechanismMSSBCBS)
	c.begin(0)
	c.begin(1)
	c.frame(0, &wire.Attach{Name: "cbs-receiver", Handle: 0, Role: wire.RoleReceiver,
		Source: &wire.Source{Address: sbamqp.CBSAddress}, Target: &wire.Target{Address: sbamqp.CBSAddress}})
	c.frame(1, &wire.Attach{Name: "cbs-sender", Handle: 0, Role: wire.RoleSender,
		Source: &wire.Source{Address: sbamqp.CBSAddress}, Target: &wire.Target{Address: sbamqp.CBSAddress}})
	c.frame(0, &wire.Flow{NextIncomingID: wire.Some[uint32](0), IncomingWindow: 1 << 20, OutgoingWindow: 100,
		Handle: wire.Some[uint32](0), DeliveryCount: wire.Some[uint32](0), LinkCredit: wire.Some[uint32](1)})
	put := uamqpRequest(t, uint64(0), wire.Map{
		{Key: sbamqp.PropName, Value: aud(env, "q")},
		{Key: sbamqp.PropOperation, Value: sbamqp.OpPutToken},
		{Key: sbamqp.PropType, Value: sbamqp.TokenTypeSAS},
	}, sasToken(env, "q", time.Now().Add(time.Hour)))
	c.frame(1, &wire.Transfer{Handle: 0, DeliveryID: wire.Some[uint32](0), DeliveryTag: []byte{0}, Payload: put})
	for {
		fr := c.read()
		tr, ok := fr.Body.(*wire.Transfer)
		if !ok {
			continue
		}
		if fr.Channel != 0 || tr.Handle != 0 {
			t.Fatalf("response on channel %d handle %d, want the receiver (channel 0, handle 0)", fr.Channel, tr.Handle)
		}
		if m, err := wire.DecodeMessage(tr.Payload); err != nil || m.ApplicationProperties[sbamqp.PropCBSStatusCode] != int32(202) {
			t.Fatalf("response %+v, %v; want status 202", m, err)
		}
		return
	}
}

// TestRawRequestWithoutReplyToAndReceiver: with no receiver on its node
// the response to a request without reply-to is dropped, with a log line
// saying why.
func TestRawRequestWithoutReplyToAndReceiver(t *testing.T) {
	var logBuf lockedBuffer
	env := newEnv(t, engineOpts(), Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	c := env.raw()
	c.saslMechanism(wire.MechanismAnonymous)
	c.begin(0)
	c.attachSender(0, sbamqp.CBSAddress)
	c.frame(0, &wire.Transfer{Handle: 0, DeliveryID: wire.Some[uint32](0), DeliveryTag: []byte{0},
		Payload: uamqpRequest(t, uint64(0), wire.Map{{Key: sbamqp.PropOperation, Value: sbamqp.OpPutToken}}, "token")})
	waitFor(t, 5*time.Second, "the log line", func() bool {
		return strings.Contains(logBuf.String(), "a request without reply-to, and no receiver attached on its node; response dropped")
	})
}

// TestRawSecondModeSenderSettledAtOnce: a sender that asks for
// rcv-settle-mode second (uamqp asks for it on every sender) gets it
// echoed and each outcome settled at once, as Service Bus sends it: uamqp
// counts a send done only at a settled disposition and never settles
// itself.
func TestRawSecondModeSenderSettledAtOnce(t *testing.T) {
	env := anonymousEnv(t)
	c := env.raw()
	c.open(&wire.Open{ContainerID: "raw"})
	c.begin(0)
	c.frame(0, &wire.Attach{Name: "second", Handle: 0, Role: wire.RoleSender, RcvSettleMode: wire.Some(wire.ReceiverSettleSecond),
		Source: &wire.Source{Address: "me"}, Target: &wire.Target{Address: "q"}})
	a, ok := c.read().Body.(*wire.Attach)
	if !ok || a.RcvSettleMode.Value != wire.ReceiverSettleSecond {
		t.Fatalf("attach %+v, want rcv-settle-mode second echoed", a)
	}
	msg := wire.EncodeMessage(nil, &broker.Message{Body: []byte("x")}, wire.EncodeOptions{})
	for id := range uint32(2) {
		c.frame(0, &wire.Transfer{Handle: 0, DeliveryID: wire.Some(id), DeliveryTag: []byte{byte(id)}, Payload: msg})
		for {
			if d, ok := c.read().Body.(*wire.Disposition); ok {
				if _, accepted := d.State.(wire.Accepted); !accepted || !d.Settled || d.First != id {
					t.Fatalf("disposition %+v, want delivery %d accepted and settled", d, id)
				}
				break
			}
		}
	}
	waitFor(t, 5*time.Second, "both messages", func() bool { return env.counts("q").Active == 2 })
}

// TestHandshakeLogsWhatArrived: a client that leaves during SASL, one that
// leaves before its open, and one that picks EXTERNAL each leave a log
// line that names the mechanisms offered and what the client sent.
func TestHandshakeLogsWhatArrived(t *testing.T) {
	var logBuf lockedBuffer
	env := newEnv(t, engineOpts(), Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})

	c := env.raw()
	c.header(wire.HeaderSASL)
	c.read() // the mechanisms
	_ = c.nc.Close()
	waitFor(t, 5*time.Second, "the line of a client gone during SASL", func() bool {
		return logLine(&logBuf, `msg="client left before the connection opened"`, `arrived="AMQP-SASL header 1.0.0" waiting-for=sasl-init offered="ANONYMOUS PLAIN MSSBCBS" err=EOF`)
	})

	c = env.raw()
	c.header(wire.HeaderSASL)
	c.read()
	b, _ := wire.AppendFrame(nil, wire.FrameSASL, 0, &wire.SASLInit{Mechanism: wire.MechanismMSSBCBS})
	c.write(b)
	c.read() // the outcome
	c.header(wire.HeaderAMQP)
	_ = c.nc.Close()
	waitFor(t, 5*time.Second, "the line of a client gone before its open", func() bool {
		return logLine(&logBuf, `msg="client left before the connection opened"`, `arrived="AMQP-SASL header 1.0.0, sasl-init MSSBCBS, AMQP header 1.0.0" waiting-for=open offered="ANONYMOUS PLAIN MSSBCBS"`)
	})

	c = env.raw()
	c.header(wire.HeaderSASL)
	c.read()
	b, _ = wire.AppendFrame(nil, wire.FrameSASL, 0, &wire.SASLInit{Mechanism: wire.MechanismExternal})
	c.write(b)
	if out, ok := c.read().Body.(*wire.SASLOutcome); !ok || out.Code != wire.SASLAuth {
		t.Fatalf("outcome of EXTERNAL %+v, want code %d", out, wire.SASLAuth)
	}
	c.expectEOF()
	waitFor(t, 5*time.Second, "the line of EXTERNAL refused", func() bool {
		return logLine(&logBuf, `msg="SASL authentication failed"`, `mechanism=EXTERNAL reason="the listener takes no client certificates`, `offered="ANONYMOUS PLAIN MSSBCBS"`)
	})
}

// logLine reports whether a line of the log holds every part.
func logLine(log *lockedBuffer, parts ...string) bool {
	for line := range strings.SplitSeq(log.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
