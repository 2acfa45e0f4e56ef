package amqpserver

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// TestSenderCreditIsReplenished sends many more messages than the credit
// the listener gives, concurrently, on one link.
func TestSenderCreditIsReplenished(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{MaxUnsettledPerLink: 2})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 20*time.Second)
	conn := env.dialAMQP(nil, 0)
	s, _ := conn.NewSession(ctx, nil)
	snd, err := s.NewSender(ctx, "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- snd.Send(ctx, amqp.NewMessage(fmt.Appendf(nil, "m%d", i)), nil)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := env.counts("q"); n.Active != 40 {
		t.Fatalf("stored %d", n.Active)
	}
}

// TestReceiverUnsettledLimit checks that a peek-lock receiver holds at
// most MaxUnsettledPerLink unsettled deliveries whatever its credit, and
// that settling one lets the next through.
func TestReceiverUnsettledLimit(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{MaxUnsettledPerLink: 2})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 20*time.Second)
	for i := range 5 {
		if err := env.eng.Send(ctx, "q", []*broker.Message{{Body: fmt.Appendf(nil, "m%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	conn := env.dialAMQP(nil, 0)
	s, _ := conn.NewSession(ctx, nil)
	rcv, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: 10, SettlementMode: amqp.ReceiverSettleModeSecond.Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	var got []*amqp.Message
	for range 2 {
		m, err := rcv.Receive(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if m, err := rcv.Receive(short, nil); err == nil {
		t.Fatalf("a third unsettled delivery %q", m.GetData())
	}
	if n := env.counts("q"); n.Locked != 2 || n.Active != 3 {
		t.Fatalf("counts %+v", n)
	}
	if err := rcv.AcceptMessage(ctx, got[0]); err != nil {
		t.Fatal(err)
	}
	m, err := rcv.Receive(ctx, nil)
	if err != nil || string(m.GetData()) != "m2" {
		t.Fatalf("after settling one: %v %v", m, err)
	}
}

// TestReceiverCreditHonoured: a peek-lock receiver gets as many unsettled
// deliveries as its credit asks for, beyond 256 (the Go SDK's
// ReceiveMessages(ctx, 1000, ...) gives credit 1000 and expects more than
// 256: its TestReceiveWithDifferentWaitTime); settling is not needed to get
// them.
func TestReceiverCreditHonoured(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{AllowAnonymous: true})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	const n = 600
	batch := make([]*broker.Message, n)
	for i := range batch {
		batch[i] = &broker.Message{Body: fmt.Appendf(nil, "m%d", i)}
	}
	if err := env.eng.Send(ctx, "q", batch); err != nil {
		t.Fatal(err)
	}
	s := env.anonymousSession()
	rcv, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: 1000, SettlementMode: amqp.ReceiverSettleModeSecond.Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := rcv.Receive(ctx, nil); err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
	}
	if c := env.counts("q"); c.Locked != n {
		t.Fatalf("counts %+v, want %d locked", c, n)
	}
}

// TestSessionWindowIsRespected opens a session with an incoming window of
// two frames: the listener sends two transfers and waits for the window to
// open.
func TestSessionWindowIsRespected(t *testing.T) {
	env := anonymousEnv(t)
	ctx := context.Background()
	for i := range 4 {
		if err := env.eng.Send(ctx, "q", []*broker.Message{{Body: fmt.Appendf(nil, "m%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	c := env.raw()
	c.open(&wire.Open{ContainerID: "raw"})
	c.frame(0, &wire.Begin{IncomingWindow: 2, OutgoingWindow: 100})
	if _, ok := c.read().Body.(*wire.Begin); !ok {
		t.Fatal("want begin")
	}
	c.frame(0, &wire.Attach{Name: "r", Handle: 0, Role: wire.RoleReceiver, Source: &wire.Source{Address: "q"}, Target: &wire.Target{Address: "me"},
		SndSettleMode: wire.Some(wire.SenderSettleSettled)})
	if a, ok := c.read().Body.(*wire.Attach); !ok || a.Source == nil {
		t.Fatalf("want attach with a source")
	}
	c.frame(0, &wire.Flow{NextIncomingID: wire.Some[uint32](0), IncomingWindow: 2, OutgoingWindow: 100,
		Handle: wire.Some[uint32](0), DeliveryCount: wire.Some[uint32](0), LinkCredit: wire.Some[uint32](10)})
	for i := range 2 {
		tr, ok := c.read().Body.(*wire.Transfer)
		if !ok || tr.DeliveryID.Value != uint32(i) || !tr.Settled {
			t.Fatalf("transfer %d: %+v", i, tr)
		}
	}
	if _, ok := c.readRawFrame(200 * time.Millisecond); ok {
		t.Fatal("a frame beyond the session window")
	}
	// Opening the window lets the rest through.
	c.frame(0, &wire.Flow{NextIncomingID: wire.Some[uint32](2), IncomingWindow: 10, OutgoingWindow: 100})
	for i := 2; i < 4; i++ {
		tr, ok := c.read().Body.(*wire.Transfer)
		if !ok || tr.DeliveryID.Value != uint32(i) {
			t.Fatalf("transfer %d: %+v", i, tr)
		}
	}
}

func TestHandleBeyondHandleMax(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{AllowAnonymous: true, MaxLinksPerSession: 4})
	env.queue("q", broker.EntitySettings{})
	c := env.raw()
	c.open(&wire.Open{ContainerID: "raw"})
	c.frame(0, &wire.Begin{IncomingWindow: 100, OutgoingWindow: 100})
	b, ok := c.read().Body.(*wire.Begin)
	if !ok || b.HandleMax.Value != 3 {
		t.Fatalf("begin %+v, want handle-max 3", b)
	}
	c.frame(0, &wire.Attach{Name: "x", Handle: 4, Role: wire.RoleSender, Target: &wire.Target{Address: "q"}})
	end, ok := c.read().Body.(*wire.End)
	if !ok || end.Error == nil || end.Error.Condition != wire.CondNotAllowed {
		t.Fatalf("want end with an error, got %+v", end)
	}
}
