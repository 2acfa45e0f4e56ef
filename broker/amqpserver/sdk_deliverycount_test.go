package amqpserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
)

// TestSDKReceiveLoopDeadLettersNothingUnseen runs the Go SDK's ordinary
// receive loop (receive up to 20, work 700 ms, complete what arrived) on a
// queue with MaxDeliveryCount 2, in real time. The SDK releases the
// messages that reach it after a receive call returned; a release is not a
// failed delivery, so nothing the application never saw is dead-lettered.
func TestSDKReceiveLoopDeadLettersNothingUnseen(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.queue("q", broker.EntitySettings{LockDuration: time.Minute, MaxDeliveryCount: 2})
	ctx := testCtx(t, 60*time.Second)
	const n = 60
	c := env.client()
	snd, err := c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The producer sends one at a time while the consumer works, so that
	// messages keep arriving around the receive calls.
	sent := make(chan error, 1)
	go func() {
		for range n {
			if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("work")}, nil); err != nil {
				sent <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		sent <- nil
	}()
	rcv, err := c.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < n && ctx.Err() == nil {
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		msgs, err := rcv.ReceiveMessages(short, 20, nil)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond) // the application's work
		for _, m := range msgs {
			if seen[m.MessageID] {
				t.Fatalf("message %s delivered again after it was seen", m.MessageID)
			}
			seen[m.MessageID] = true
			if err := rcv.CompleteMessage(ctx, m, nil); err != nil {
				t.Fatalf("complete %s: %v", m.MessageID, err)
			}
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	counts := env.counts("q")
	if len(seen) != n || counts.DeadLettered != 0 {
		t.Fatalf("the application saw %d of %d; dead-lettered %d (counts %+v)", len(seen), n, counts.DeadLettered, counts)
	}
}
