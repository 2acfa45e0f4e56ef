package amqpserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	amqp "github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// dialAMQP connects go-amqp to the listener with SASL PLAIN and the default
// key (full access); wrap may interpose on the connection.
func (e *testEnv) dialAMQP(wrap func(net.Conn) net.Conn, maxFrame uint32) *amqp.Conn {
	e.t.Helper()
	nc, err := net.Dial("tcp", e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	if wrap != nil {
		nc = wrap(nc)
	}
	c, err := amqp.NewConn(testCtx(e.t, 10*time.Second), nc, &amqp.ConnOptions{
		SASLType:     amqp.SASLTypePlain(DefaultKeyName, DefaultKey),
		MaxFrameSize: maxFrame,
		HostName:     e.addr,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for pause := 50 * time.Microsecond; !cond(); pause = min(2*pause, 5*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(pause)
	}
}

// amqpSession dials the listener with go-amqp and begins a session.
func (e *testEnv) amqpSession(ctx context.Context) *amqp.Session {
	e.t.Helper()
	s, err := e.dialAMQP(nil, 0).NewSession(ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// counts returns an entity's counts.
func (e *testEnv) counts(path string) broker.Counts {
	e.t.Helper()
	ent, err := e.eng.Entity(context.Background(), path)
	if err != nil {
		e.t.Fatal(err)
	}
	return ent.Counts
}

// activeBodies browses an entity's active messages.
func (e *testEnv) activeBodies(path string) []string {
	e.t.Helper()
	ms, err := e.eng.Browse(context.Background(), broker.BrowseRequest{Entity: path, Category: broker.CategoryActive, Max: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Body))
	}
	return out
}

func TestAMQPPreSettledSend(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 10*time.Second)
	s := env.amqpSession(ctx)
	snd, err := s.NewSender(ctx, "q", &amqp.SenderOptions{SettlementMode: amqp.SenderSettleModeSettled.Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"x", "y", "z"} {
		if err := snd.Send(ctx, amqp.NewMessage([]byte(b)), nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "three stored messages", func() bool { return env.counts("q").Active == 3 })
	if got := env.activeBodies("q"); !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Fatalf("stored %v", got)
	}
}

// TestAMQPSettleModes checks that the listener echoes every settle mode
// and settles accordingly: a sender in rcv-settle-mode second gets its
// outcome settled at once, as Service Bus sends it (TestRawSecondModeSenderSettledAtOnce);
// a receiver in mode first settles with one disposition.
func TestAMQPSettleModes(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 10*time.Second)
	s := env.amqpSession(ctx)
	snd, err := s.NewSender(ctx, "q", &amqp.SenderOptions{
		SettlementMode:              amqp.SenderSettleModeUnsettled.Ptr(),
		RequestedReceiverSettleMode: amqp.ReceiverSettleModeSecond.Ptr(),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"complete", "release", "reject", "modify"} {
		if err := snd.Send(ctx, amqp.NewMessage([]byte(b)), nil); err != nil {
			t.Fatalf("send in rcv-settle-mode second: %v", err)
		}
	}
	rcv, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{
		SettlementMode: amqp.ReceiverSettleModeFirst.Ptr(),
		Credit:         10,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]*amqp.Message, 4)
	for i := range got {
		if got[i], err = rcv.Receive(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := rcv.AcceptMessage(ctx, got[0]); err != nil {
		t.Fatal(err)
	}
	if err := rcv.RejectMessage(ctx, got[2], &amqp.Error{Condition: "app:bad", Description: "nope"}); err != nil {
		t.Fatal(err)
	}
	if err := rcv.ModifyMessage(ctx, got[3], &amqp.ModifyMessageOptions{UndeliverableHere: true}); err != nil {
		t.Fatal(err)
	}
	if err := rcv.ReleaseMessage(ctx, got[1]); err != nil {
		t.Fatal(err)
	}
	// The released message comes back on the link's remaining credit.
	again, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Released is not a failed delivery: the header's count stays 0.
	if string(again.GetData()) != "release" || again.Header == nil || again.Header.DeliveryCount != 0 {
		t.Fatalf("redelivered %q with header %+v", again.GetData(), again.Header)
	}
	if err := rcv.AcceptMessage(ctx, again); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "settlements", func() bool {
		n := env.counts("q")
		return n.Locked == 0 && n.DeadLettered == 1 && n.Deferred == 1
	})
	dl, err := env.eng.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(dl) != 1 || string(dl[0].Body) != "reject" || dl[0].DeadLetterReason() != "app:bad" || dl[0].DeadLetterErrorDescription() != "nope" {
		t.Fatalf("dead-lettered %+v", dl)
	}
}

// TestAMQPDrain checks that a drain with nothing to deliver advances the
// delivery count and answers with drain set.
func TestAMQPDrain(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 10*time.Second)
	s := env.amqpSession(ctx)
	rcv, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: -1, SettlementMode: amqp.ReceiverSettleModeSecond.Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rcv.IssueCredit(5); err != nil {
		t.Fatal(err)
	}
	if err := rcv.DrainCredit(ctx, nil); err != nil {
		t.Fatalf("drain: %v", err)
	}
	// A message sent after the drain is not delivered: there is no credit.
	if err := env.eng.Send(ctx, "q", []*broker.Message{{Body: []byte("late")}}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if m, err := rcv.Receive(short, nil); err == nil {
		t.Fatalf("received %q without credit", m.GetData())
	}
	if n := env.counts("q"); n.Active != 1 || n.Locked != 0 {
		t.Fatalf("counts %+v", n)
	}
	if err := rcv.IssueCredit(1); err != nil {
		t.Fatal(err)
	}
	m, err := rcv.Receive(ctx, nil)
	if err != nil || string(m.GetData()) != "late" {
		t.Fatalf("after new credit: %v %v", m, err)
	}
	if err := rcv.AcceptMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
}

// TestAMQPAbruptDisconnect checks that a message lock held by a connection
// that drops without a close stays until it is settled or expires.
func TestAMQPAbruptDisconnect(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{LockDuration: time.Hour})
	ctx := testCtx(t, 10*time.Second)
	if err := env.eng.Send(ctx, "q", []*broker.Message{{Body: []byte("m")}}); err != nil {
		t.Fatal(err)
	}
	var raw net.Conn
	conn := env.dialAMQP(func(c net.Conn) net.Conn { raw = c; return c }, 0)
	s, _ := conn.NewSession(ctx, nil)
	rcv, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: 1, SettlementMode: amqp.ReceiverSettleModeSecond.Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rcv.Receive(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n := env.counts("q"); n.Locked != 1 {
		t.Fatalf("counts while locked %+v", n)
	}
	_ = raw.Close()
	waitFor(t, 5*time.Second, "the connection to go", func() bool { return env.srv.Connections() == 0 })
	if n := env.counts("q"); n.Locked != 1 {
		t.Fatalf("counts after the connection went %+v, want the lock kept", n)
	}
	settleLeftLock(t, env, "q")
}

// byteWriter writes every Write one byte at a time, so the listener reads
// each frame in as many pieces as it has bytes.
type byteWriter struct {
	net.Conn
	mu sync.Mutex
}

func (b *byteWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range p {
		if _, err := b.Conn.Write(p[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

// TestAMQPOneByteWrites runs a session whose every byte arrives alone,
// with a message split over many small frames.
func TestAMQPOneByteWrites(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	conn := env.dialAMQP(func(c net.Conn) net.Conn {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		return &byteWriter{Conn: c}
	}, 512)
	s, _ := conn.NewSession(ctx, nil)
	snd, err := s.NewSender(ctx, "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789"), 300)
	if err := snd.Send(ctx, amqp.NewMessage(big), nil); err != nil {
		t.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: 1, SettlementMode: amqp.ReceiverSettleModeSecond.Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.GetData(), big) {
		t.Fatalf("received %d bytes, want %d", len(m.GetData()), len(big))
	}
	if err := rcv.AcceptMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if n := env.counts("q"); n.Active != 0 || n.Locked != 0 {
		t.Fatalf("counts %+v", n)
	}
}

// TestAMQPSessionStateNeedsTheLock checks that get-session-state and
// set-session-state answer only the connection that holds the session
// lock: while an SDK session receiver holds session "a", a request from
// another connection is refused with 410 and session-lock-lost, and the
// holder's state is unchanged.
func TestAMQPSessionStateNeedsTheLock(t *testing.T) {
	env := anonymousEnv(t)
	env.queue("s", broker.EntitySettings{RequiresSession: true})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, _ := c.NewSender("s", nil)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x"), SessionID: ptr("a")}, nil); err != nil {
		t.Fatal(err)
	}
	holder, err := c.AcceptSessionForQueue(ctx, "s", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.SetSessionState(ctx, []byte("mine"), nil); err != nil {
		t.Fatal(err)
	}

	conn := env.dialAMQP(nil, 0)
	sess, err := conn.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	req, err := sess.NewSender(ctx, "s/$management", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := sess.NewReceiver(ctx, "s/$management", &amqp.ReceiverOptions{TargetAddress: "other-reply", Credit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range []struct {
		op   string
		body map[string]any
	}{
		{"com.microsoft:get-session-state", map[string]any{"session-id": "a"}},
		{"com.microsoft:set-session-state", map[string]any{"session-id": "a", "session-state": []byte("theirs")}},
	} {
		msg := &amqp.Message{
			Properties:            &amqp.MessageProperties{MessageID: fmt.Sprintf("req-%d", i), ReplyTo: ptr("other-reply")},
			ApplicationProperties: map[string]any{"operation": r.op},
			Value:                 r.body,
		}
		if err := req.Send(ctx, msg, nil); err != nil {
			t.Fatal(err)
		}
		got, err := resp.Receive(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.AcceptMessage(ctx, got)
		code, cond := got.ApplicationProperties["statusCode"], got.ApplicationProperties["errorCondition"]
		if code != int32(410) || cond != "com.microsoft:session-lock-lost" {
			t.Errorf("%s from another connection: status %v, condition %v; want 410, com.microsoft:session-lock-lost", r.op, code, cond)
		}
	}
	if state, err := holder.GetSessionState(ctx, nil); err != nil || string(state) != "mine" {
		t.Fatalf("holder's state = %q, %v; want mine", state, err)
	}
}
