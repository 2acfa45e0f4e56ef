package wire

import (
	"reflect"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/peeklock/peeklock/broker"
)

// TestPassthroughKept decodes what a sender put in a message besides the
// Service Bus properties (header flags, its own delivery and message
// annotations, a footer) and finds it again, after the broker's own
// annotations, in what a receiver gets.
func TestPassthroughKept(t *testing.T) {
	in := &amqp.Message{
		Header:              &amqp.MessageHeader{Durable: true, Priority: 100},
		DeliveryAnnotations: amqp.Annotations{"x-opt-delivery-annotation-test": "test-value", "x-opt-lock-token": amqp.UUID{1}},
		Annotations: amqp.Annotations{
			"x-opt-message-annotation-test": "test-value",
			"x-opt-partition-key":           "pk",
			"nested":                        map[string]any{"list": []any{int64(1), "two"}},
			int64(7):                        "reserved key, dropped",
		},
		Footer:     amqp.Annotations{"x-opt-footer-test": "footer-value"},
		Properties: &amqp.MessageProperties{ContentEncoding: ptrTo("application/json; charset=utf-8")},
		Data:       [][]byte{[]byte("x")},
	}
	b, err := in.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	p := m.AMQP
	if p == nil || !p.Durable || !p.HasPriority || p.Priority != 100 {
		t.Fatalf("header flags: %+v", p)
	}
	if m.PartitionKey != "pk" || m.LockToken != (broker.LockToken{1}) {
		t.Fatalf("Service Bus annotations: partition key %q, lock token %v", m.PartitionKey, m.LockToken)
	}

	// As a receiver gets it, with the broker's annotations and a lock token.
	m.SequenceNumber, m.State, m.LockToken = 5, broker.StateDeferred, broker.LockToken{2}
	var out amqp.Message
	if err := out.UnmarshalBinary(EncodeMessage(nil, m, EncodeOptions{LockToken: true})); err != nil {
		t.Fatal(err)
	}
	if out.Header == nil || !out.Header.Durable || out.Header.Priority != 100 {
		t.Errorf("header %+v", out.Header)
	}
	wantDA := amqp.Annotations{"x-opt-delivery-annotation-test": "test-value", "x-opt-lock-token": amqp.UUID{2}}
	if !reflect.DeepEqual(out.DeliveryAnnotations, wantDA) {
		t.Errorf("delivery annotations %#v, want %#v", out.DeliveryAnnotations, wantDA)
	}
	wantMA := amqp.Annotations{
		"x-opt-message-annotation-test": "test-value", "x-opt-partition-key": "pk",
		"nested":                map[string]any{"list": []any{int64(1), "two"}},
		"x-opt-sequence-number": int64(5), "x-opt-message-state": int32(1),
	}
	if !reflect.DeepEqual(out.Annotations, wantMA) {
		t.Errorf("message annotations %#v, want %#v", out.Annotations, wantMA)
	}
	if !reflect.DeepEqual(out.Footer, in.Footer) {
		t.Errorf("footer %#v, want %#v", out.Footer, in.Footer)
	}
	// The JavaScript SDK's live tests send a content-encoding and expect it
	// back.
	if out.Properties == nil || out.Properties.ContentEncoding == nil || *out.Properties.ContentEncoding != "application/json; charset=utf-8" {
		t.Errorf("properties %+v: content-encoding lost", out.Properties)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestActiveHasNoMessageState: Service Bus sends no x-opt-message-state for
// an active message; deferred and scheduled ones carry theirs.
func TestActiveHasNoMessageState(t *testing.T) {
	for _, st := range []broker.State{broker.StateActive, broker.StateDeferred, broker.StateScheduled} {
		var out amqp.Message
		m := &broker.Message{SequenceNumber: 1, State: st, EnqueuedTime: time.Unix(1, 0)}
		if err := out.UnmarshalBinary(EncodeMessage(nil, m, EncodeOptions{})); err != nil {
			t.Fatal(err)
		}
		v, ok := out.Annotations["x-opt-message-state"]
		if ok != (st != broker.StateActive) || (ok && v != int32(st)) {
			t.Errorf("%s: x-opt-message-state %v (present %v)", st, v, ok)
		}
	}
}

// TestPassthroughThatDoesNotDecodeIsDropped: maps that are not one whole
// AMQP map are left out, never sent.
func TestPassthroughThatDoesNotDecodeIsDropped(t *testing.T) {
	good := mustMap(Map{{Symbol("k"), "v"}})
	for _, bad := range [][]byte{
		{0xc1, 0x05, 0x02},             // truncated
		{0xa1, 0x01, 'x'},              // a string, not a map
		append(good, 0x40),             // a byte after the map
		{0xc1, 0x03, 0x01, 0x40, 0x40}, // an odd element count
	} {
		m := &broker.Message{SequenceNumber: 1, AMQP: &broker.Passthrough{DeliveryAnnotations: bad, MessageAnnotations: bad, Footer: bad}}
		var out amqp.Message
		if err := out.UnmarshalBinary(EncodeMessage(nil, m, EncodeOptions{})); err != nil {
			t.Fatalf("% x: the message does not decode: %v", bad, err)
		}
		if out.DeliveryAnnotations != nil || out.Footer != nil || len(out.Annotations) != 1 {
			t.Errorf("% x: sent %v %v %v", bad, out.DeliveryAnnotations, out.Annotations, out.Footer)
		}
	}
}
