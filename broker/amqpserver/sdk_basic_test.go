package amqpserver

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

func TestSDKSendReceiveComplete(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, err := c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("hello"), MessageID: ptr("m1")}, nil); err != nil {
		t.Fatal(err)
	}
	rcv, err := c.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || string(msgs[0].Body) != "hello" || msgs[0].MessageID != "m1" {
		t.Fatalf("got %+v", msgs)
	}
	if msgs[0].DeliveryCount != 1 || *msgs[0].SequenceNumber != 1 {
		t.Fatalf("delivery count %d, sequence %d", msgs[0].DeliveryCount, *msgs[0].SequenceNumber)
	}
	if err := rcv.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Fatal(err)
	}
	ent, err := env.eng.Entity(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if ent.Counts.Active != 0 || ent.Counts.Locked != 0 {
		t.Fatalf("counts after complete: %+v", ent.Counts)
	}
}

func ptr[T any](v T) *T { return &v }
