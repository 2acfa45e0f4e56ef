package remote

import (
	"reflect"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

func TestTokenFromTag(t *testing.T) {
	// The .NET byte order of 01020304-0506-0708-090a-0b0c0d0e0f10.
	tag := []byte{4, 3, 2, 1, 6, 5, 8, 7, 9, 10, 11, 12, 13, 14, 15, 16}
	want := uuid.MustParse("01020304-0506-0708-090a-0b0c0d0e0f10")
	if got := tokenFromTag(tag); uuid.UUID(got) != want {
		t.Fatalf("tokenFromTag = %v, want %v", uuid.UUID(got), want)
	}
	// The delivery annotation wins over the tag.
	other := uuid.New()
	m := &amqp.Message{DeliveryTag: tag, DeliveryAnnotations: amqp.Annotations{sbamqp.AnnotLockToken: amqp.UUID(other)}}
	if got := lockTokenOf(m); uuid.UUID(got) != other {
		t.Fatalf("lockTokenOf = %v, want the annotation %v", uuid.UUID(got), other)
	}
}

func TestConvertBodiesRoundTrip(t *testing.T) {
	for _, in := range []*amqp.Message{
		{Value: map[string]any{"a": int64(1), "b": "x"}},
		{Sequence: [][]any{{int64(1), "two"}, {true}}},
		{Data: [][]byte{[]byte("ab"), []byte("cd")}},
	} {
		m := fromAMQP(in)
		out, err := toAMQP(m)
		if err != nil {
			t.Fatalf("toAMQP(%s): %v", m.BodyKind, err)
		}
		switch m.BodyKind {
		case broker.BodyValue:
			if !reflect.DeepEqual(out.Value, in.Value) {
				t.Fatalf("value body = %#v, want %#v", out.Value, in.Value)
			}
		case broker.BodySequence:
			if !reflect.DeepEqual(out.Sequence, in.Sequence) {
				t.Fatalf("sequence body = %#v, want %#v", out.Sequence, in.Sequence)
			}
		default:
			if string(m.Body) != "abcd" || !reflect.DeepEqual(out.Data, in.Data) {
				t.Fatalf("data body = %q, sent back as %q, want the sections %q", m.Body, out.Data, in.Data)
			}
		}
	}
	if _, err := toAMQP(&broker.Message{BodyKind: broker.BodyValue, Body: []byte{0xff}}); broker.CodeOf(err) != broker.CodeInvalid {
		t.Fatalf("bad value body: err = %v, want invalid", err)
	}
	if _, err := toAMQP(&broker.Message{Body: []byte("abc"), DataSections: []int{1, 1}}); broker.CodeOf(err) != broker.CodeInvalid {
		t.Fatalf("data sections that do not fit the body: err = %v, want invalid", err)
	}
	if _, err := toAMQP(&broker.Message{ApplicationProperties: map[string]any{"m": map[string]any{}}}); broker.CodeOf(err) != broker.CodeInvalid {
		t.Fatalf("map property: err = %v, want invalid", err)
	}
}

// TestConvertEmptySessionID: a group-id that is the empty string is the
// session "" both ways, not the absence of a session.
func TestConvertEmptySessionID(t *testing.T) {
	empty := ""
	m := fromAMQP(&amqp.Message{Properties: &amqp.MessageProperties{GroupID: &empty}})
	if !m.SessionIDSet || !m.HasSessionID() {
		t.Fatalf("fromAMQP: SessionID %q, SessionIDSet %v", m.SessionID, m.SessionIDSet)
	}
	out, err := toAMQP(m)
	if err != nil || out.Properties.GroupID == nil || *out.Properties.GroupID != "" {
		t.Fatalf("toAMQP: group-id %v, %v", out.Properties.GroupID, err)
	}
	if m := fromAMQP(&amqp.Message{Properties: &amqp.MessageProperties{}}); m.HasSessionID() {
		t.Fatal("no group-id became a session")
	}
}

func TestFromAMQPAnnotations(t *testing.T) {
	enq := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	in := &amqp.Message{
		Header: &amqp.MessageHeader{DeliveryCount: 2, TTL: time.Minute},
		Annotations: amqp.Annotations{
			sbamqp.AnnotSequenceNumber: int64(42), sbamqp.AnnotEnqueuedTime: enq, sbamqp.AnnotMessageState: int32(1),
			sbamqp.AnnotDeadLetterSource: "orders", sbamqp.AnnotEnqueueSequenceNumber: int64(7),
		},
		Properties: &amqp.MessageProperties{MessageID: amqp.UUID(uuid.MustParse("11111111-2222-3333-4444-555555555555")), CorrelationID: uint64(9)},
	}
	m := fromAMQP(in)
	if m.SequenceNumber != 42 || !m.EnqueuedTime.Equal(enq) || m.State != broker.StateDeferred || m.DeadLetterSource != "orders" ||
		m.EnqueuedSequenceNumber != 7 || m.DeliveryCount != 3 || !m.ExpiresAt.Equal(enq.Add(time.Minute)) ||
		m.MessageID != "11111111-2222-3333-4444-555555555555" || m.CorrelationID != "9" {
		t.Fatalf("fromAMQP = %+v", m)
	}
}
