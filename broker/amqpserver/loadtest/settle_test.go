package loadtest

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// slowStore is a memory store whose batches take syncDelay to become
// durable, like a disk sync: the engine's settlements wait for it.
type slowStore struct {
	store.Store
}

// syncDelay is the simulated disk sync of slowStore.
const syncDelay = 2 * time.Millisecond

// Apply implements store.Store.
func (s slowStore) Apply(b *store.Batch) (store.Pending, error) {
	p, err := s.Store.Apply(b)
	if err != nil {
		return nil, err
	}
	return slowPending{p}, nil
}

// slowPending waits syncDelay before the store's own wait.
type slowPending struct{ p store.Pending }

// Wait implements store.Pending.
func (p slowPending) Wait() error {
	time.Sleep(syncDelay)
	return p.p.Wait()
}

// TestAcceptedWhileSettlingSlowly accepts (rcv-settle-mode first, so the
// client does not wait) messages faster than the engine applies the
// completions. Every accepted message must be completed: none may be left
// active or locked once the connection is gone. (The listener once counted
// a delivery as settled when its outcome arrived rather than when it was
// applied, delivered more meanwhile, and dropped the outcomes that no
// longer fit its settlement queue: those messages came back.)
func TestAcceptedWhileSettlingSlowly(t *testing.T) {
	const n = 1500
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eng, err := engine.New(engine.Options{Store: slowStore{store.NewMemory()}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.CreateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue}); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < n; k += 100 {
		batch := make([]*broker.Message, 100)
		for i := range batch {
			batch[i] = &broker.Message{Body: []byte("m")}
		}
		if err := eng.Send(ctx, "q", batch); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := amqpserver.New(eng, amqpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() {
		_ = srv.Close()
		if err := <-served; !errors.Is(err, amqpserver.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	}()

	conn, err := amqp.Dial(ctx, (&listener{addr: l.Addr().String()}).url(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for k := range n {
		msg, err := r.Receive(ctx, nil)
		if err != nil {
			t.Fatalf("receive message %d: %v", k, err)
		}
		if err := r.AcceptMessage(ctx, msg); err != nil {
			t.Fatalf("accept message %d: %v", k, err)
		}
	}
	// Ending the session waits for the listener's end, which it sends
	// after it has taken every disposition sent before.
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	// The listener applies the outcomes it took, then ends the
	// connection and releases its locks.
	deadline := time.Now().Add(30 * time.Second)
	for srv.Connections() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the listener did not end the connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ent, err := eng.Entity(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if ent.Counts.Active != 0 || ent.Counts.Locked != 0 {
		t.Fatalf("after %d accepted messages the queue holds %d active and %d locked, want none", n, ent.Counts.Active, ent.Counts.Locked)
	}
}

// TestWatchStall checks that watchStall cancels with errStalled once the
// count stops moving for the given time, and not while it moves.
func TestWatchStall(t *testing.T) {
	const d = 300 * time.Millisecond
	var got atomic.Int64
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	start := time.Now()
	go watchStall(ctx, &got, d, cancel)
	for range 10 { // 500 ms of progress
		time.Sleep(d / 6)
		got.Add(1)
	}
	if err := context.Cause(ctx); err != nil {
		t.Fatalf("cancelled while the count moved: %v", err)
	}
	<-ctx.Done()
	if err := context.Cause(ctx); !errors.Is(err, errStalled) {
		t.Fatalf("cause = %v, want errStalled", err)
	}
	if el := time.Since(start); el < 500*time.Millisecond+d {
		t.Fatalf("stalled after %v, before the count had stood still for %v", el, d)
	}
}
