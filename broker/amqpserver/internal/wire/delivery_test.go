package wire

import (
	"bytes"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestEncodeDeliveryAsMessage checks that a delivery encodes to the bytes of
// the message copy it stands for: the stored message's own per-delivery
// fields (here different from the delivery's, or zero) are not used.
func TestEncodeDeliveryAsMessage(t *testing.T) {
	stored := fullMessage()
	stored.SequenceNumber, stored.DeliveryCount, stored.State = 7, 0, broker.StateScheduled
	stored.LockToken, stored.LockedUntil = broker.LockToken{}, time.Time{}
	deliveries := map[string]broker.Delivery{
		"locked": {Msg: stored, SequenceNumber: 42, DeliveryCount: 3, State: broker.StateDeferred,
			SubQueue: broker.SubQueueDeadLetter, LockToken: lockTok, LockedUntil: t0.Add(30 * time.Second)},
		"first delivery, active": {Msg: stored, SequenceNumber: 42, DeliveryCount: 1},
		"never delivered":        {Msg: stored, SequenceNumber: 42},
		"bare":                   {Msg: &broker.Message{Body: []byte("b")}},
	}
	opts := []EncodeOptions{
		{DeliveryCount: true, LockToken: true},
		{DeliveryCount: true},
		{LockToken: true},
		{},
		{CorrelationID: []byte{0xa1, 1, 'c'}},
	}
	for name, d := range deliveries {
		for _, o := range opts {
			want := EncodeMessage(nil, d.Message(), o)
			got := EncodeDelivery(nil, &d, o)
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %+v: EncodeDelivery wrote\n%x\nEncodeMessage of its copy\n%x", name, o, got, want)
			}
		}
	}
	if before := *fullMessage(); !bytes.Equal(EncodeMessage(nil, &before, EncodeOptions{DeliveryCount: true, LockToken: true}),
		EncodeDelivery(nil, &broker.Delivery{Msg: stored, SequenceNumber: 42, DeliveryCount: 3, State: broker.StateDeferred,
			LockToken: lockTok, LockedUntil: t0.Add(30 * time.Second)}, EncodeOptions{DeliveryCount: true, LockToken: true})) {
		t.Error("a delivery of the stored message does not encode as the message with its fields set")
	}
}
