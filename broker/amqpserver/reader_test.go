package amqpserver

import (
	"context"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// TestReaderDoesNotWaitOnASlowEntity: while a store read of entity x holds
// x (a receive-and-delete reads its messages under the entity's mutex), a
// link attached to x on a connection does not hold up that connection's
// other frames: the accept of a message of y, sent after the attach, is
// answered at once.
func TestReaderDoesNotWaitOnASlowEntity(t *testing.T) {
	st := &faultyReads{Store: store.NewMemory()}
	env := newEnv(t, engine.Options{Store: st}, Options{})
	env.queue("x", broker.EntitySettings{})
	env.queue("y", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	for _, q := range []string{"x", "y"} {
		if err := env.eng.Send(ctx, q, []*broker.Message{{Body: []byte(q)}}); err != nil {
			t.Fatal(err)
		}
	}
	s := env.amqpSession(ctx)
	rcv, err := s.NewReceiver(ctx, "y", &amqp.ReceiverOptions{Credit: 1, SettlementMode: amqp.ReceiverSettleModeSecond.Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}

	st.stall()
	defer st.resume()
	taken := make(chan error, 1)
	go func() {
		_, err := env.eng.Receive(context.Background(), broker.ReceiveRequest{Entity: "x", Mode: broker.ReceiveAndDelete, Max: 1})
		taken <- err
	}()
	<-st.stalledRead // x's mutex is held by a read that waits
	attached := make(chan error, 1)
	go func() {
		_, err := s.NewSender(ctx, "x", nil)
		attached <- err
	}()
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rcv.AcceptMessage(actx, m); err != nil {
		t.Fatalf("accept of y's message while x's store read waits: %v", err)
	}
	if err := <-attached; err != nil {
		t.Fatalf("attach to x while its store read waits: %v", err)
	}
	st.resume()
	if err := <-taken; err != nil {
		t.Fatal(err)
	}
}
