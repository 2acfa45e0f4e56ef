package wire

import (
	"errors"
	"reflect"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/peeklock/peeklock/broker"
)

// TestManagementRequestTypes decodes request bodies as the Go SDK builds
// them (internal/mgmt.go) and checks the types the management layer sees.
func TestManagementRequestTypes(t *testing.T) {
	reason := "why"
	tok := amqp.UUID(lockTok)
	encoded, _ := (&amqp.Message{Data: [][]byte{[]byte("x")}}).MarshalBinary()
	req := &amqp.Message{
		Properties:            &amqp.MessageProperties{MessageID: "req-1", ReplyTo: ptr("q1/$management-reply")},
		ApplicationProperties: map[string]any{"operation": "com.microsoft:update-disposition", "com.microsoft:server-timeout": uint(60000)},
		Value: map[string]any{
			"disposition-status":   "defered",
			"lock-tokens":          []amqp.UUID{tok},
			"deadletter-reason":    &reason,
			"sequence-numbers":     []int64{5, 6},
			"receiver-settle-mode": uint32(1),
			"from-sequence-number": int64(7),
			"message-count":        int32(10),
			"properties-to-modify": map[string]any{"k": int64(1)},
			"messages":             []any{map[string]any{"message-id": "m", "message": encoded}},
		},
	}
	b, err := req.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.BodyKind != broker.BodyValue || m.ApplicationProperties["com.microsoft:server-timeout"] != uint64(60000) {
		t.Fatalf("kind %v, properties %#v", m.BodyKind, m.ApplicationProperties)
	}
	v, err := DecodeAMQPValue(m.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := v.(Map)
	want := map[string]any{
		"disposition-status":   "defered",
		"lock-tokens":          []UUID{UUID(lockTok)},
		"deadletter-reason":    "why",
		"sequence-numbers":     []int64{5, 6},
		"receiver-settle-mode": uint32(1),
		"from-sequence-number": int64(7),
		"message-count":        int32(10),
		"properties-to-modify": Map{{"k", int64(1)}},
	}
	for k, w := range want {
		got, ok := body.Get(k)
		if !ok || !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %#v, want %#v", k, got, w)
		}
	}
	// A list of maps, each in go-amqp's (random) map order.
	v, _ = body.Get("messages")
	list, ok := v.([]any)
	if !ok || len(list) != 1 {
		t.Fatalf("messages = %#v", v)
	}
	entry, ok := list[0].(Map)
	if !ok {
		t.Fatalf("messages[0] is %T", list[0])
	}
	if msg, _ := entry.Get("message"); !reflect.DeepEqual(msg, encoded) {
		t.Errorf("message = %#v", msg)
	}
	if id, _ := entry.Get("message-id"); id != "m" {
		t.Errorf("message-id = %#v", id)
	}
}

// TestManagementResponseTypes encodes responses with this package and
// reads them the way the Go SDK does (type assertions in internal/mgmt.go).
func TestManagementResponseTypes(t *testing.T) {
	inner := EncodeMessage(nil, fullMessage(), EncodeOptions{LockToken: true, DeliveryCount: true})
	body, err := AppendAMQPValue(nil, Map{
		{"messages", []any{Map{{"message", inner}, {"lock-token", UUID(lockTok)}}}},
		{"expirations", []time.Time{t0}},
		{"sequence-numbers", []int64{41, 42}},
		{Symbol("expiration"), t0},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp := &broker.Message{
		CorrelationID:         "req-1",
		ApplicationProperties: map[string]any{"statusCode": int32(200), "statusDescription": "OK"},
		Body:                  body,
		BodyKind:              broker.BodyValue,
	}
	var got amqp.Message
	if err := got.UnmarshalBinary(EncodeMessage(nil, resp, EncodeOptions{})); err != nil {
		t.Fatal(err)
	}
	if code, ok := got.ApplicationProperties["statusCode"].(int32); !ok || code != 200 {
		t.Fatalf("statusCode %#v", got.ApplicationProperties["statusCode"])
	}
	if got.Properties.CorrelationID != "req-1" {
		t.Fatalf("correlation-id %#v", got.Properties.CorrelationID)
	}
	val, ok := got.Value.(map[string]any)
	if !ok {
		t.Fatalf("value %T", got.Value)
	}
	messages, ok := val["messages"].([]any)
	if !ok || len(messages) != 1 {
		t.Fatalf("messages %#v", val["messages"])
	}
	entry, ok := messages[0].(map[string]any)
	if !ok {
		t.Fatalf("entry %T", messages[0])
	}
	raw, ok := entry["message"].([]byte)
	if !ok {
		t.Fatalf("message %T", entry["message"])
	}
	if _, ok := entry["lock-token"].(amqp.UUID); !ok {
		t.Fatalf("lock-token %T", entry["lock-token"])
	}
	var inMsg amqp.Message
	if err := inMsg.UnmarshalBinary(raw); err != nil {
		t.Fatal(err)
	}
	if tok, ok := inMsg.DeliveryAnnotations["x-opt-lock-token"].(amqp.UUID); !ok || tok != amqp.UUID(lockTok) {
		t.Fatalf("inner lock token %#v", inMsg.DeliveryAnnotations["x-opt-lock-token"])
	}
	if seq, ok := inMsg.Annotations["x-opt-sequence-number"].(int64); !ok || seq != 42 {
		t.Fatalf("inner sequence number %#v", inMsg.Annotations["x-opt-sequence-number"])
	}
	if times, ok := val["expirations"].([]time.Time); !ok || len(times) != 1 || !times[0].Equal(t0) {
		t.Fatalf("expirations %#v", val["expirations"])
	}
	if seqs, ok := val["sequence-numbers"].([]int64); !ok || !reflect.DeepEqual(seqs, []int64{41, 42}) {
		t.Fatalf("sequence-numbers %#v", val["sequence-numbers"])
	}
	if exp, ok := val["expiration"].(time.Time); !ok || !exp.Equal(t0) {
		t.Fatalf("expiration %#v", val["expiration"])
	}
}

func TestDecodeAMQPValueErrors(t *testing.T) {
	for _, in := range [][]byte{
		nil,
		AppendBinary(AppendDescriptor(nil, descData), nil),
		append(AppendNull(AppendDescriptor(nil, descAMQPValue)), 0x40),
	} {
		if _, err := DecodeAMQPValue(in); !errors.Is(err, ErrDecode) {
			t.Errorf("DecodeAMQPValue(% x) error = %v", in, err)
		}
	}
	if _, err := AppendAMQPValue(nil, struct{}{}); !errors.Is(err, ErrEncode) {
		t.Fatalf("AppendAMQPValue error = %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
