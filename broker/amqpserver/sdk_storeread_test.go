package amqpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// TestSDKStoreReadErrorReachesTheReceiver: when the store cannot read the
// messages a request takes, the official Go SDK gets the engine's error
// instead of "no messages", and nothing is left locked:
//   - a peek and a deferred receive ($management requests) fail with it;
//   - a receive link is detached with it. The SDK's ReceiveMessages then
//     returns no messages and no error, by design (it recovers the link and
//     says the next call reports a lasting problem), but the message is not
//     locked: it is there for the next receive.
//
// Once the store reads again, both messages are received with the delivery
// counts they had.
func TestSDKStoreReadErrorReachesTheReceiver(t *testing.T) {
	st := &faultyReads{Store: store.NewMemory()}
	env := newEnv(t, engine.Options{Store: st}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, err := c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"deferred", "kept"} {
		if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte(body)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rcv, err := c.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(first) != 1 {
		t.Fatalf("receive = %v, %v", first, err)
	}
	if err := rcv.DeferMessage(ctx, first[0], nil); err != nil {
		t.Fatal(err)
	}
	deferredSeq := *first[0].SequenceNumber

	st.fail.Store(true)
	wantReadErr := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "reading the messages failed") {
			t.Fatalf("%s with failing reads: %v; want the store's error", what, err)
		}
	}
	_, err = rcv.PeekMessages(ctx, 5, nil)
	wantReadErr("PeekMessages", err)
	_, err = rcv.ReceiveDeferredMessages(ctx, []int64{deferredSeq}, nil)
	wantReadErr("ReceiveDeferredMessages", err)
	got, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("ReceiveMessages with failing reads = %d messages, %v; want none (the SDK recovers the link)", len(got), err)
	}
	if n := env.counts("q"); n.Active != 1 || n.Locked != 0 || n.Deferred != 1 {
		t.Fatalf("counts after the failed reads = %+v; want 1 active, 1 deferred, none locked", n)
	}

	st.fail.Store(false)
	got, err = rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(got) != 1 || string(got[0].Body) != "kept" || got[0].DeliveryCount != 1 {
		t.Fatalf("ReceiveMessages after the store recovered = %v, %v; want the message, first delivery", got, err)
	}
	d, err := rcv.ReceiveDeferredMessages(ctx, []int64{deferredSeq}, nil)
	if err != nil || len(d) != 1 || string(d[0].Body) != "deferred" || d[0].DeliveryCount != 2 {
		t.Fatalf("ReceiveDeferredMessages after the store recovered = %v, %v; want it, delivery 2", d, err)
	}
}
