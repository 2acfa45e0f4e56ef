package amqpserver

import (
	"reflect"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// TestSDKDataSections sends bodies of several AMQP data sections with the
// Go SDK, alone and in a batch, to a queue and a topic, and reads them back
// as sent: the SDK then leaves ReceivedMessage.Body nil and gives the
// sections in RawAMQPMessage.Body.Data. Peek, receive, receive by sequence
// number after a defer, and a subscription's copy all keep them.
func TestSDKDataSections(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	env.create(redTopic()...)
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	sections := [][]byte{[]byte("Hello World"), []byte("And another message!")}
	three := [][]byte{[]byte("a"), {}, []byte("c")}
	send := func(to string, data ...[][]byte) {
		t.Helper()
		snd, err := c.NewSender(to, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer snd.Close(ctx)
		if err := snd.SendAMQPAnnotatedMessage(ctx, &azservicebus.AMQPAnnotatedMessage{Body: azservicebus.AMQPAnnotatedMessageBody{Data: data[0]}}, nil); err != nil {
			t.Fatal(err)
		}
		batch, err := snd.NewMessageBatch(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range data[1:] {
			if err := batch.AddAMQPAnnotatedMessage(&azservicebus.AMQPAnnotatedMessage{Body: azservicebus.AMQPAnnotatedMessageBody{Data: d}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := snd.SendMessageBatch(ctx, batch, nil); err != nil {
			t.Fatal(err)
		}
	}
	check := func(where string, m *azservicebus.ReceivedMessage, want [][]byte) {
		t.Helper()
		if m.Body != nil {
			t.Errorf("%s: Body %q, want nil for a body of several data sections", where, m.Body)
		}
		if got := m.RawAMQPMessage.Body.Data; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: data sections %q, want %q", where, got, want)
		}
	}
	send("q", sections, three)
	send("t", sections, three)

	rcv, err := c.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	peeked, err := rcv.PeekMessages(ctx, 2, nil)
	if err != nil || len(peeked) != 2 {
		t.Fatalf("peek: %d messages, %v", len(peeked), err)
	}
	check("peek", peeked[0], sections)
	check("peek of the batch message", peeked[1], three)
	got := receiveN(t, rcv, 2)
	check("receive", got[0], sections)
	check("receive of the batch message", got[1], three)
	if err := rcv.DeferMessage(ctx, got[0], nil); err != nil {
		t.Fatal(err)
	}
	d, err := rcv.ReceiveDeferredMessages(ctx, []int64{*got[0].SequenceNumber}, nil)
	if err != nil || len(d) != 1 {
		t.Fatalf("receive deferred: %d messages, %v", len(d), err)
	}
	check("receive by sequence number", d[0], sections)
	for _, m := range []*azservicebus.ReceivedMessage{d[0], got[1]} {
		if err := rcv.CompleteMessage(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}

	sub, err := c.NewReceiverForSubscription("t", "all", nil)
	if err != nil {
		t.Fatal(err)
	}
	fanned := receiveN(t, sub, 2)
	check("subscription", fanned[0], sections)
	check("subscription, batch message", fanned[1], three)
}

// TestSDKPassthrough sends, with the Go SDK, what Service Bus passes through
// untouched (header durable and priority, the sender's own delivery and
// message annotations, a footer) and finds it on the received message, next
// to the broker's annotations and the lock token in the delivery
// annotations, as the SDK's own TestSender_SendAMQPMessageWithMultipleByteSlicesInData
// expects. An active message carries no x-opt-message-state.
func TestSDKPassthrough(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, err := c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = snd.SendAMQPAnnotatedMessage(ctx, &azservicebus.AMQPAnnotatedMessage{
		Header:              &azservicebus.AMQPAnnotatedMessageHeader{Priority: 100, Durable: true},
		DeliveryAnnotations: map[any]any{"x-opt-delivery-annotation-test": "test-value"},
		MessageAnnotations:  map[any]any{"x-opt-message-annotation-test": "test-value", "nested": []any{int64(1), "two"}},
		Footer:              map[any]any{"x-opt-footer-test": "footer-value"},
		Body:                azservicebus.AMQPAnnotatedMessageBody{Data: [][]byte{[]byte("x")}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := c.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(where string, raw *azservicebus.AMQPAnnotatedMessage, lockToken bool) {
		t.Helper()
		if h := raw.Header; h == nil || h.Priority != 100 || !h.Durable {
			t.Errorf("%s: header %+v, want priority 100, durable", where, h)
		}
		if raw.DeliveryAnnotations["x-opt-delivery-annotation-test"] != "test-value" {
			t.Errorf("%s: delivery annotations %v", where, raw.DeliveryAnnotations)
		}
		if _, ok := raw.DeliveryAnnotations["x-opt-lock-token"]; ok != lockToken {
			t.Errorf("%s: delivery annotations %v: lock token present %v, want %v", where, raw.DeliveryAnnotations, ok, lockToken)
		}
		ma := raw.MessageAnnotations
		if ma["x-opt-message-annotation-test"] != "test-value" || !reflect.DeepEqual(ma["nested"], []any{int64(1), "two"}) || ma["x-opt-sequence-number"] != int64(1) {
			t.Errorf("%s: message annotations %v", where, ma)
		}
		if _, ok := ma["x-opt-message-state"]; ok {
			t.Errorf("%s: an active message has x-opt-message-state", where)
		}
		if !reflect.DeepEqual(raw.Footer, map[any]any{"x-opt-footer-test": "footer-value"}) {
			t.Errorf("%s: footer %v", where, raw.Footer)
		}
	}
	peeked, err := rcv.PeekMessages(ctx, 1, nil)
	if err != nil || len(peeked) != 1 {
		t.Fatalf("peek: %d, %v", len(peeked), err)
	}
	check("peek", peeked[0].RawAMQPMessage, false)
	got := receiveN(t, rcv, 1)[0]
	check("receive", got.RawAMQPMessage, true)
	if err := rcv.CompleteMessage(ctx, got, nil); err != nil {
		t.Fatal(err)
	}
}
