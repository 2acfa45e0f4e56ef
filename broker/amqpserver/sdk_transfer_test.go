package amqpserver

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// TestSDKTransferDeadLetter provokes a transfer failure (a subscription
// forwards to a queue that was deleted) and reads the subscription's
// transfer dead-letter sub-queue with the SDK: peek, receive, renew, defer
// and receive by sequence number, complete, receive-and-delete.
func TestSDKTransferDeadLetter(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	ctx := testCtx(t, 30*time.Second)
	env.queue("gone", broker.EntitySettings{})
	env.create(
		broker.Entity{Path: "t", Kind: broker.KindTopic},
		broker.Entity{Path: "t/Subscriptions/keep", Kind: broker.KindSubscription},
		broker.Entity{Path: "t/Subscriptions/fwd", Kind: broker.KindSubscription, Settings: broker.EntitySettings{ForwardTo: "gone"}},
	)
	if err := env.eng.DeleteEntity(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	c := env.client()
	snd, _ := c.NewSender("t", nil)
	for _, b := range []string{"a", "b", "c"} {
		// The topic accepts the message: the failing forward does not reach
		// the sender.
		if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte(b), MessageID: ptr(b)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	tdlq, err := c.NewReceiverForSubscription("t", "fwd", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueTransfer})
	if err != nil {
		t.Fatal(err)
	}
	peeked, err := tdlq.PeekMessages(ctx, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := bodies(peeked); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("peek of the transfer dead-letter queue: %v", got)
	}
	p := peeked[0]
	if *p.SequenceNumber != 1 || p.DeadLetterReason == nil || *p.DeadLetterReason != broker.ReasonEntityNotFound ||
		p.DeadLetterErrorDescription == nil || *p.DeadLetterErrorDescription != `the auto-forwarding target "gone" does not exist` {
		t.Fatalf("peeked: seq %d reason %v description %v", *p.SequenceNumber, p.DeadLetterReason, p.DeadLetterErrorDescription)
	}
	// The main queue's and the dead-letter queue's peeks do not show them.
	main, _ := c.NewReceiverForSubscription("t", "fwd", nil)
	if ms, err := main.PeekMessages(ctx, 10, nil); err != nil || len(ms) != 0 {
		t.Fatalf("peek of the subscription: %v, %v", bodies(ms), err)
	}
	dlq, _ := c.NewReceiverForSubscription("t", "fwd", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if ms, err := dlq.PeekMessages(ctx, 10, nil); err != nil || len(ms) != 0 {
		t.Fatalf("peek of the dead-letter queue: %v, %v", bodies(ms), err)
	}

	got := receiveN(t, tdlq, 2)
	if got[0].DeliveryCount != 1 || *got[0].DeadLetterReason != broker.ReasonEntityNotFound {
		t.Fatalf("received: delivery %d reason %v", got[0].DeliveryCount, got[0].DeadLetterReason)
	}
	if err := tdlq.RenewMessageLock(ctx, got[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := tdlq.CompleteMessage(ctx, got[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := tdlq.DeferMessage(ctx, got[1], nil); err != nil {
		t.Fatal(err)
	}
	def, err := tdlq.ReceiveDeferredMessages(ctx, []int64{*got[1].SequenceNumber}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(def) != 1 || string(def[0].Body) != "b" || def[0].State != azservicebus.MessageStateDeferred {
		t.Fatalf("deferred: %v", bodies(def))
	}
	if err := tdlq.CompleteMessage(ctx, def[0], nil); err != nil { // update-disposition on $management
		t.Fatal(err)
	}
	rad, _ := c.NewReceiverForSubscription("t", "fwd", &azservicebus.ReceiverOptions{
		SubQueue: azservicebus.SubQueueTransfer, ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if last := receiveN(t, rad, 1); string(last[0].Body) != "c" {
		t.Fatalf("receive-and-delete got %q", last[0].Body)
	}
	ent, _ := env.eng.Entity(ctx, "t/Subscriptions/fwd")
	if ent.Counts != (broker.Counts{}) {
		t.Fatalf("counts at the end %+v", ent.Counts)
	}
	keep, _ := env.eng.Entity(ctx, "t/Subscriptions/keep")
	if keep.Counts.Active != 3 {
		t.Fatalf("the other subscription holds %+v", keep.Counts)
	}
	// Nothing can be sent to the transfer dead-letter queue.
	bad, _ := c.NewSender("t/Subscriptions/fwd/$Transfer/$DeadLetterQueue", nil)
	err = bad.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	if err == nil || !strings.Contains(err.Error(), "amqp:not-allowed") {
		t.Fatalf("send to the transfer dead-letter queue: %v", err)
	}
}
