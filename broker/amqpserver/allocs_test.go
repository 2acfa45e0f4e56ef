//go:build !race

package amqpserver

import (
	"runtime"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// The most heap allocations one 1 KiB message may cost through the
// listener, go-amqp's client (v1.7.0, pinned in go.mod) in the same
// process included, since a process's allocation count cannot be split by
// goroutine: a send waiting for its outcome, and a peek-lock receive with
// its accept. 50.4 and 35.4–38.3 when they were set (GOMAXPROCS 1 to 4);
// 40.4–43.4 and 31.3–33.7 after session 28 (frames encoded into pooled
// chunks, settlements and unsettled deliveries kept by value); 35.5–37.3
// and 30.3–32.4 after session 30 (frames decoded in the read buffer, a
// store goroutine's lists and message decoder reused, header passthroughs
// shared; deliveries encoded from the stored message without a copy).
// An allocation count depends on how busy the machine is only through how
// frames batch, so these guard the listener's CPU per message in CI, where
// timings cannot: raise one only with a reason (and the number in
// BENCHMARKS.md), lower it when the path gets cheaper.
const (
	listenerSendAllocsBudget    = 41
	listenerReceiveAllocsBudget = 35
)

func TestListenerAllocsPerMessage(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, time.Minute)
	s := env.amqpSession(ctx)
	snd, err := s.NewSender(ctx, "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 1024)
	const n = 1000
	send := func() {
		for range n {
			if err := snd.Send(ctx, amqp.NewMessage(body), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	send() // warms the connection's buffers and the entity's trees
	rcv, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: 256})
	if err != nil {
		t.Fatal(err)
	}
	receive := func() {
		for range n {
			m, err := rcv.Receive(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := rcv.AcceptMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	receive()
	sendAllocs := mallocsPer(n, send)
	receiveAllocs := mallocsPer(n, receive)
	t.Logf("per message: send %.1f allocations (budget %d), receive + accept %.1f (budget %d)",
		sendAllocs, listenerSendAllocsBudget, receiveAllocs, listenerReceiveAllocsBudget)
	if sendAllocs > listenerSendAllocsBudget {
		t.Errorf("a send through the listener costs %.1f allocations, over its budget of %d", sendAllocs, listenerSendAllocsBudget)
	}
	if receiveAllocs > listenerReceiveAllocsBudget {
		t.Errorf("a receive + accept through the listener costs %.1f allocations, over its budget of %d", receiveAllocs, listenerReceiveAllocsBudget)
	}
}

// mallocsPer runs fn and returns the process's heap allocations during it
// divided by n.
func mallocsPer(n int, fn func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}
