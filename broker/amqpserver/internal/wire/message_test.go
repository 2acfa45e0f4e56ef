package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

var (
	t0      = time.Date(2025, 6, 1, 12, 30, 45, 123_000_000, time.UTC)
	lockTok = broker.LockToken(uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff"))
)

// mustMap encodes an AMQP map.
func mustMap(m Map) []byte {
	b, err := AppendValue(nil, m)
	if err != nil {
		panic(err)
	}
	return b
}

// fullMessage is a delivered message with every field set.
func fullMessage() *broker.Message {
	return &broker.Message{
		MessageID:            "id-1",
		ContentType:          "application/json",
		CorrelationID:        "corr-1",
		Subject:              "subject",
		To:                   "to-addr",
		ReplyTo:              "reply-addr",
		ReplyToSessionID:     "reply-session",
		SessionID:            "session",
		PartitionKey:         "pk",
		ViaPartitionKey:      "vpk",
		TimeToLive:           90 * time.Second,
		ScheduledEnqueueTime: t0.Add(time.Hour),
		ApplicationProperties: map[string]any{
			"s": "str", "b": true, "i8": int8(-8), "i16": int16(-16), "i32": int32(-32), "i64": int64(-64),
			"u8": uint8(8), "u16": uint16(16), "u32": uint32(32), "u64": uint64(64),
			"f32": float32(1.5), "f64": 2.25, "t": t0, "d": 1500 * time.Millisecond,
			"bin": []byte{1, 2}, "uuid": uuid.UUID(lockTok), "nil": nil,
		},
		Body:                   []byte(`{"hello":"world"}`),
		BodyKind:               broker.BodyData,
		DataSections:           []int{9, 8}, // as amqpFull sends it
		AMQP:                   &broker.Passthrough{MessageAnnotations: mustMap(Map{{Symbol("x-opt-unknown"), "passed through"}})},
		SequenceNumber:         42,
		EnqueuedSequenceNumber: 41,
		EnqueuedTime:           t0,
		ExpiresAt:              t0.Add(90 * time.Second),
		LockedUntil:            t0.Add(30 * time.Second),
		LockToken:              lockTok,
		DeliveryCount:          3,
		DeadLetterSource:       "q/src",
		State:                  broker.StateDeferred,
	}
}

func TestMessageRoundTrip(t *testing.T) {
	m := fullMessage()
	b := EncodeMessage(nil, m, EncodeOptions{LockToken: true, DeliveryCount: true})
	got, err := DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	want := m.Clone()
	want.Size = int64(len(b))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", got, want)
	}
	// No shared memory with the input.
	for i := range b {
		b[i] = 0
	}
	if string(got.Body) != `{"hello":"world"}` || !bytes.Equal(got.ApplicationProperties["bin"].([]byte), []byte{1, 2}) {
		t.Fatal("decoded message aliases its input")
	}
}

// TestDecodeOwnedMessage checks that a message decoded from bytes handed
// over equals the one DecodeMessage gives, and that its body is read in
// place: the copy a listener saves on every message it stores.
func TestDecodeOwnedMessage(t *testing.T) {
	m := fullMessage()
	m.DataSections = nil // one data section, as SDKs send a body
	b := EncodeMessage(nil, m, EncodeOptions{LockToken: true, DeliveryCount: true})
	want, err := DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeOwnedMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("owned decode:\n got %#v\nwant %#v", got, want)
	}
	i := bytes.Index(b, got.Body)
	if i < 0 || &b[i] != &got.Body[0] {
		t.Fatal("the body of an owned decode is a copy, not the bytes handed over")
	}
}

// TestMessageDecoder decodes messages one after another with one
// MessageDecoder, a malformed one between them, as DecodeOwnedMessage does.
func TestMessageDecoder(t *testing.T) {
	full := fullMessage()
	full.DataSections = nil
	var md MessageDecoder
	for i, b := range [][]byte{
		EncodeMessage(nil, full, EncodeOptions{LockToken: true, DeliveryCount: true}),
		{0x00, 0x53, 0x75, 0xa0, 0x05, 1, 2}, // a data section shorter than it says
		EncodeMessage(nil, &broker.Message{Body: []byte("two")}, EncodeOptions{}),
	} {
		want, wantErr := DecodeOwnedMessage(b)
		if (wantErr != nil) != (i == 1) {
			t.Fatalf("message %d: DecodeOwnedMessage error %v", i, wantErr)
		}
		got, err := md.DecodeOwned(b)
		if !reflect.DeepEqual(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("message %d: got %#v, %v\nwant %#v, %v", i, got, err, want, wantErr)
		}
		if md.d.buf != nil {
			t.Fatalf("message %d: the decoder keeps the message's bytes", i)
		}
	}
}

// TestHeaderPassthroughShared checks that messages passing through only
// their header share one Passthrough per durable flag and priority up to 9,
// equal to what they would have had of their own.
func TestHeaderPassthroughShared(t *testing.T) {
	for _, p := range []broker.Passthrough{
		{Durable: true},
		{HasPriority: true},
		{Durable: true, HasPriority: true, Priority: 9},
		{HasPriority: true, Priority: 10},
		{Durable: true, ContentEncoding: "gzip"},
	} {
		m := &broker.Message{Body: []byte("b"), AMQP: &p}
		b := EncodeMessage(nil, m, EncodeOptions{})
		one, err := DecodeMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		two, err := DecodeOwnedMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*one.AMQP, p) || !reflect.DeepEqual(*two.AMQP, p) {
			t.Fatalf("%+v decoded as %+v and %+v", p, *one.AMQP, *two.AMQP)
		}
		shared := p.ContentEncoding == "" && p.Priority <= 9
		if (one.AMQP == two.AMQP) != shared {
			t.Fatalf("%+v: shared %v, want %v", p, one.AMQP == two.AMQP, shared)
		}
	}
}

func TestMessageEncodeOptions(t *testing.T) {
	m := fullMessage()
	got, err := DecodeMessage(EncodeMessage(nil, m, EncodeOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if !got.LockToken.IsZero() || got.DeliveryCount != 0 {
		t.Fatalf("without options: lock token %v, delivery count %d", got.LockToken, got.DeliveryCount)
	}
	// A message as a sender writes it: properties and a data section only.
	plain := &broker.Message{MessageID: "x", Body: []byte("b")}
	b := EncodeMessage(nil, plain, EncodeOptions{DeliveryCount: true})
	want := []byte{0x00, 0x53, 0x73, 0xc0, 0x04, 0x01, 0xa1, 0x01, 'x', 0x00, 0x53, 0x75, 0xa0, 0x01, 'b'}
	if !bytes.Equal(b, want) {
		t.Fatalf("plain message % x\nwant          % x", b, want)
	}
	// DeliveryCount 1 is header delivery-count 0, written explicitly;
	// durable and first-acquirer are written false.
	one := &broker.Message{DeliveryCount: 1}
	b = EncodeMessage(nil, one, EncodeOptions{DeliveryCount: true})
	want = []byte{0x00, 0x53, 0x70, 0xc0, 0x06, 0x05, 0x42, 0x40, 0x40, 0x42, 0x43}
	if !bytes.HasPrefix(b, want) {
		t.Fatalf("header % x, want prefix % x", b, want)
	}
	got, err = DecodeMessage(b)
	if err != nil || got.DeliveryCount != 1 {
		t.Fatalf("decoded DeliveryCount %d, %v", got.DeliveryCount, err)
	}
	// A TTL beyond the header's 49.7 days is written as the most it holds;
	// absolute-expiry-time minus creation-time restores it.
	long := &broker.Message{TimeToLive: 100 * 24 * time.Hour, EnqueuedTime: t0, ExpiresAt: t0.Add(100 * 24 * time.Hour), SequenceNumber: 1}
	got, err = DecodeMessage(EncodeMessage(nil, long, EncodeOptions{}))
	if err != nil || got.TimeToLive != long.TimeToLive || !got.ExpiresAt.Equal(long.ExpiresAt) {
		t.Fatalf("long TTL decoded as %v expires %v, %v", got.TimeToLive, got.ExpiresAt, err)
	}
	// Unencodable property values are written as text.
	odd := &broker.Message{ApplicationProperties: map[string]any{"c": complex(1, 2)}}
	got, err = DecodeMessage(EncodeMessage(nil, odd, EncodeOptions{}))
	if err != nil || got.ApplicationProperties["c"] != "(1+2i)" {
		t.Fatalf("complex property decoded as %#v, %v", got.ApplicationProperties["c"], err)
	}
}

// amqpFull is the go-amqp message equivalent to fullMessage, as a broker
// would deliver it.
func amqpFull() *amqp.Message {
	str := func(s string) *string { return &s }
	exp, created := t0.Add(90*time.Second), t0
	return &amqp.Message{
		Header:              &amqp.MessageHeader{TTL: 90 * time.Second, DeliveryCount: 2, Priority: 4},
		DeliveryAnnotations: amqp.Annotations{"x-opt-lock-token": amqp.UUID(lockTok)},
		Annotations: amqp.Annotations{
			"x-opt-sequence-number":         int64(42),
			"x-opt-enqueue-sequence-number": int64(41),
			"x-opt-enqueued-time":           t0,
			"x-opt-locked-until":            t0.Add(30 * time.Second),
			"x-opt-scheduled-enqueue-time":  t0.Add(time.Hour),
			"x-opt-partition-key":           "pk",
			"x-opt-via-partition-key":       "vpk",
			"x-opt-deadletter-source":       "q/src",
			"x-opt-message-state":           int32(1),
			"x-opt-unknown":                 "passed through",
		},
		Properties: &amqp.MessageProperties{
			MessageID: "id-1", To: str("to-addr"), Subject: str("subject"), ReplyTo: str("reply-addr"),
			CorrelationID: "corr-1", ContentType: str("application/json"),
			AbsoluteExpiryTime: &exp, CreationTime: &created,
			GroupID: str("session"), ReplyToGroupID: str("reply-session"),
		},
		ApplicationProperties: map[string]any{
			"s": "str", "b": true, "i8": int8(-8), "i16": int16(-16), "i32": int32(-32), "i64": int64(-64),
			"u8": uint8(8), "u16": uint16(16), "u32": uint32(32), "u64": uint64(64),
			"f32": float32(1.5), "f64": 2.25, "t": t0, "bin": []byte{1, 2}, "uuid": amqp.UUID(lockTok), "nil": nil,
		},
		Data: [][]byte{[]byte(`{"hello":`), []byte(`"world"}`)},
	}
}

func TestDecodeGoAMQPMessage(t *testing.T) {
	b, err := amqpFull().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	want := fullMessage()
	delete(want.ApplicationProperties, "d") // go-amqp cannot encode a time.Duration
	want.Size = int64(len(b))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded go-amqp message:\n got %#v\nwant %#v", got, want)
	}
}

func TestGoAMQPDecodesOurMessage(t *testing.T) {
	b := EncodeMessage(nil, fullMessage(), EncodeOptions{LockToken: true, DeliveryCount: true})
	var got amqp.Message
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	want := amqpFull()
	// go-amqp decodes timestamps in the local time zone.
	for k, v := range got.Annotations {
		got.Annotations[k] = inUTC(v)
	}
	for k, v := range got.ApplicationProperties {
		got.ApplicationProperties[k] = inUTC(v)
	}
	if p := got.Properties; p != nil && p.AbsoluteExpiryTime != nil && p.CreationTime != nil {
		*p.AbsoluteExpiryTime, *p.CreationTime = p.AbsoluteExpiryTime.UTC(), p.CreationTime.UTC()
	}
	if !reflect.DeepEqual(got.Header, want.Header) {
		t.Errorf("header %+v, want %+v", got.Header, want.Header)
	}
	if !reflect.DeepEqual(got.DeliveryAnnotations, want.DeliveryAnnotations) {
		t.Errorf("delivery annotations %#v, want %#v", got.DeliveryAnnotations, want.DeliveryAnnotations)
	}
	if !reflect.DeepEqual(got.Annotations, want.Annotations) {
		t.Errorf("annotations %#v\nwant %#v", got.Annotations, want.Annotations)
	}
	if !reflect.DeepEqual(got.Properties, want.Properties) {
		t.Errorf("properties %#v\nwant %#v", got.Properties, want.Properties)
	}
	d := got.ApplicationProperties["d"]
	delete(got.ApplicationProperties, "d")
	if !reflect.DeepEqual(got.ApplicationProperties, want.ApplicationProperties) {
		t.Errorf("application properties %#v\nwant %#v", got.ApplicationProperties, want.ApplicationProperties)
	}
	// The duration travels as the .NET described TimeSpan (ticks).
	if s := fmt.Sprintf("%v", d); !strings.Contains(s, "com.microsoft:timespan") || !strings.Contains(s, "15000000") {
		t.Errorf("duration property decoded by go-amqp as %s", s)
	}
	if !reflect.DeepEqual(got.Data, want.Data) || got.Value != nil || got.Sequence != nil {
		t.Errorf("body data %q value %v sequence %v", got.Data, got.Value, got.Sequence)
	}
}

// inUTC returns a time.Time in UTC and any other value unchanged.
func inUTC(v any) any {
	if t, ok := v.(time.Time); ok {
		return t.UTC()
	}
	return v
}

func TestMessageIDForms(t *testing.T) {
	u := amqp.UUID(lockTok)
	cases := []struct {
		id   any
		want string
	}{
		{"text", "text"},
		{u, "00112233-4455-6677-8899-aabbccddeeff"},
		{uint64(12345), "12345"},
		{[]byte{0xde, 0xad}, "dead"},
	}
	for _, c := range cases {
		b, err := (&amqp.Message{Properties: &amqp.MessageProperties{MessageID: c.id, CorrelationID: c.id}}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		if m.MessageID != c.want || m.CorrelationID != c.want {
			t.Errorf("id %T: message-id %q correlation-id %q, want %q", c.id, m.MessageID, m.CorrelationID, c.want)
		}
	}
}

func TestValueAndSequenceBodies(t *testing.T) {
	value := &amqp.Message{Value: map[string]any{"k": int64(1), "list": []any{"a", int32(2)}}}
	seq := &amqp.Message{Sequence: [][]any{{"a", int64(1)}, {true}}}
	for _, src := range []*amqp.Message{value, seq} {
		b, err := src.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		wantKind := broker.BodyValue
		if src.Sequence != nil {
			wantKind = broker.BodySequence
		}
		if m.BodyKind != wantKind {
			t.Fatalf("body kind %v, want %v", m.BodyKind, wantKind)
		}
		// The message has only body sections, so Body is the whole input.
		if !bytes.Equal(m.Body, b) {
			t.Fatalf("body % x\nwant % x", m.Body, b)
		}
		// go-amqp reads Body alone back as a message of body sections.
		var back amqp.Message
		if err := back.UnmarshalBinary(m.Body); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Value, src.Value) || !reflect.DeepEqual(back.Sequence, src.Sequence) {
			t.Fatalf("body read back as value %#v sequence %#v", back.Value, back.Sequence)
		}
		// And our encoding sends the sections unchanged.
		out := EncodeMessage(nil, m, EncodeOptions{})
		var again amqp.Message
		if err := again.UnmarshalBinary(out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again.Value, src.Value) || !reflect.DeepEqual(again.Sequence, src.Sequence) || again.Data != nil {
			t.Fatalf("re-encoded body: value %#v sequence %#v data %q", again.Value, again.Sequence, again.Data)
		}
	}
	// Empty value and sequence bodies still encode a body section.
	for _, kind := range []broker.BodyKind{broker.BodyValue, broker.BodySequence} {
		var back amqp.Message
		if err := back.UnmarshalBinary(EncodeMessage(nil, &broker.Message{BodyKind: kind}, EncodeOptions{})); err != nil {
			t.Fatal(err)
		}
		if kind == broker.BodyValue && (back.Value != nil || back.Data != nil || back.Sequence != nil) {
			t.Fatalf("empty value body read back as value %#v data %q", back.Value, back.Data)
		}
		if kind == broker.BodySequence && (len(back.Sequence) != 1 || len(back.Sequence[0]) != 0) {
			t.Fatalf("empty sequence body read back as %#v", back.Sequence)
		}
	}
}

func TestDescribedApplicationProperties(t *testing.T) {
	// What the .NET SDK sends for TimeSpan, DateTimeOffset and Uri.
	ticks := int64(sbamqp.DotNetEpochTicks + t0.UnixNano()/100)
	var b []byte
	b = AppendDescriptor(b, descApplicationProperties)
	b, _ = AppendMap(b, Map{
		{"span", Described{symTimeSpan, int64(12_345_000)}},
		{"when", Described{symDateTimeOffset, ticks}},
		{"uri", Described{symURI, "https://example.com/x"}},
		{"char", Char('é')},
		{"sym", Symbol("s")},
	})
	m, err := DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"span": 1234500 * time.Microsecond, "when": t0, "uri": "https://example.com/x", "char": "é", "sym": "s"}
	if !reflect.DeepEqual(m.ApplicationProperties, want) {
		t.Fatalf("properties %#v\nwant %#v", m.ApplicationProperties, want)
	}
}

func TestDecodeMessageErrors(t *testing.T) {
	appProps := func(m Map) []byte {
		b, err := AppendMap(AppendDescriptor(nil, descApplicationProperties), m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	annots := func(m Map) []byte {
		b, err := AppendMap(AppendDescriptor(nil, descMessageAnnotations), m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	data := AppendBinary(AppendDescriptor(nil, descData), []byte("x"))
	value := AppendNull(AppendDescriptor(nil, descAMQPValue))
	cases := []struct {
		name string
		in   []byte
		msg  string
	}{
		{"list property", appProps(Map{{"l", []any{}}}), `application property "l": values of type list are not allowed`},
		{"array property", appProps(Map{{"a", []int64{1}}}), `values of type array are not allowed`},
		{"decimal property", appProps(Map{{"d", Decimal32{}}}), `values of type decimal32 are not allowed`},
		{"unknown described property", appProps(Map{{"x", Described{Symbol("x:y"), int64(1)}}}), `described type x:y is not supported`},
		{"timespan of string", appProps(Map{{"x", Described{symTimeSpan, "1"}}}), `described type com.microsoft:timespan with a string value`},
		{"symbol key", appProps(Map{{Symbol("k"), "v"}}), `application property key "k" is a symbol: want a string`},
		{"ulong key", appProps(Map{{uint64(1), "v"}}), "application property key is not a string"},
		{"sequence number as string", annots(Map{{AnnotSequenceNumber, "1"}}), "message annotation x-opt-sequence-number: constructor 0xa1 where a signed integer was expected"},
		{"enqueued time as long", annots(Map{{AnnotEnqueuedTime, int64(1)}}), "message annotation x-opt-enqueued-time: constructor 0x55 where a timestamp was expected"},
		{"message state 7", annots(Map{{AnnotMessageState, int32(7)}}), "message annotation x-opt-message-state has value 7: want 0, 1 or 2"},
		{"data then value", append(append([]byte{}, data...), value...), "amqp-value section after data sections"},
		{"two values", append(append([]byte{}, value...), value...), "more than one amqp-value section"},
		{"unknown section", []byte{0x00, 0x53, 0x79, 0x40}, "unknown message section described type 0x79"},
		{"symbolic unknown section", append(AppendSymbol([]byte{0x00}, "x:y"), 0x40), "unknown message section x:y"},
		{"not described", []byte{0x40}, "where a described type was expected"},
		{"truncated data", data[:len(data)-1], "need 1 bytes, 0 left"},
		{"sequence not a list", append(AppendDescriptor(nil, descAMQPSequence), 0x40), "where a list was expected"},
		{"message id list", []byte{0x00, 0x53, 0x73, 0xc0, 0x02, 0x01, 0x45}, "message id of type list: want string, uuid, ulong or binary"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeMessage(c.in)
			if !errors.Is(err, ErrDecode) || !errors.Is(err, broker.ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error = %v, want %q", err, c.msg)
			}
		})
	}
}

func TestSplitBatch(t *testing.T) {
	one, _ := (&amqp.Message{Properties: &amqp.MessageProperties{MessageID: "m1"}, Data: [][]byte{[]byte("first")}}).MarshalBinary()
	two, _ := (&amqp.Message{Properties: &amqp.MessageProperties{MessageID: "m2"}, ApplicationProperties: map[string]any{"n": int64(2)}, Data: [][]byte{[]byte("second")}}).MarshalBinary()
	// The SDK sets the outer message's properties from the first message.
	outer, err := (&amqp.Message{Format: MessageFormatBatch, Properties: &amqp.MessageProperties{MessageID: "m1"},
		Annotations: amqp.Annotations{"x-opt-partition-key": "p"}, Data: [][]byte{one, two}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	parts, err := SplitBatch(outer)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || !bytes.Equal(parts[0], one) || !bytes.Equal(parts[1], two) {
		t.Fatalf("parts %q", parts)
	}
	m2, err := DecodeMessage(parts[1])
	if err != nil || m2.MessageID != "m2" || string(m2.Body) != "second" || m2.ApplicationProperties["n"] != int64(2) {
		t.Fatalf("second message %+v, %v", m2, err)
	}
	for _, bad := range [][]byte{
		nil,
		AppendNull(AppendDescriptor(nil, descAMQPValue)),
		outer[:len(outer)-1],
		{0x00, 0xa3, 1, 'x', 0x40},
	} {
		if _, err := SplitBatch(bad); !errors.Is(err, ErrDecode) || !errors.Is(err, broker.ErrInvalid) {
			t.Errorf("SplitBatch(% x) error = %v", bad, err)
		}
	}
}

func TestLockTokenDeliveryTag(t *testing.T) {
	// .NET: new Guid("00112233-4455-6677-8899-aabbccddeeff").ToByteArray()
	dotnet := []byte{0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}
	tag := DeliveryTag(lockTok)
	if !bytes.Equal(tag[:], dotnet) {
		t.Fatalf("DeliveryTag = % x, want % x", tag, dotnet)
	}
	got, err := LockTokenFromDeliveryTag(dotnet)
	if err != nil || got != lockTok {
		t.Fatalf("LockTokenFromDeliveryTag = %v, %v", got, err)
	}
	if _, err := LockTokenFromDeliveryTag(dotnet[:15]); !errors.Is(err, broker.ErrInvalid) {
		t.Fatalf("short tag error = %v", err)
	}
	// The SDK's own conversion (lockTokenFromMessageTag) swaps the same
	// bytes: check it against the azservicebus algorithm.
	sdk := [16]byte(dotnet)
	sdk[0], sdk[3] = sdk[3], sdk[0]
	sdk[1], sdk[2] = sdk[2], sdk[1]
	sdk[4], sdk[5] = sdk[5], sdk[4]
	sdk[6], sdk[7] = sdk[7], sdk[6]
	if broker.LockToken(sdk) != lockTok {
		t.Fatalf("SDK conversion gives %v", broker.LockToken(sdk))
	}
}

func TestTTLMillis(t *testing.T) {
	if ms, ok := ttlMillis(maxHeaderTTL); !ok || ms != math.MaxUint32 {
		t.Fatalf("max ttl = %d %v", ms, ok)
	}
	if _, ok := ttlMillis((math.MaxUint32 + 1) * time.Millisecond); ok {
		t.Fatal("ttl beyond uint32 accepted")
	}
	if _, ok := ttlMillis(0); ok {
		t.Fatal("zero ttl written")
	}
}

// TestDataSectionsKept checks that the data sections of a body keep their
// boundaries from the wire to broker.Message and back, including empty
// sections, and that one section needs no DataSections.
func TestDataSectionsKept(t *testing.T) {
	for _, sections := range [][][]byte{
		{[]byte("Hello World"), []byte("And another message!")},
		{{}, []byte("x"), {}},
		{[]byte("only")},
	} {
		b, err := (&amqp.Message{Data: sections}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		if want := bytes.Join(sections, nil); !bytes.Equal(m.Body, want) {
			t.Fatalf("body %q, want %q", m.Body, want)
		}
		if len(sections) == 1 && m.DataSections != nil {
			t.Fatalf("one section: DataSections %v, want nil", m.DataSections)
		}
		var back amqp.Message
		if err := back.UnmarshalBinary(EncodeMessage(nil, m, EncodeOptions{})); err != nil {
			t.Fatal(err)
		}
		if len(back.Data) != len(sections) {
			t.Fatalf("%d sections sent back, want %d (%q)", len(back.Data), len(sections), back.Data)
		}
		for i := range sections {
			if !bytes.Equal(back.Data[i], sections[i]) {
				t.Fatalf("section %d is %q, want %q", i, back.Data[i], sections[i])
			}
		}
	}
}

// TestDataSectionsThatDoNotFit checks that lengths which do not describe
// the body are not trusted: the body goes out whole, as one section.
func TestDataSectionsThatDoNotFit(t *testing.T) {
	m := &broker.Message{Body: []byte("abc"), DataSections: []int{1, 5}}
	var back amqp.Message
	if err := back.UnmarshalBinary(EncodeMessage(nil, m, EncodeOptions{})); err != nil {
		t.Fatal(err)
	}
	if len(back.Data) != 1 || string(back.Data[0]) != "abc" {
		t.Fatalf("sections %q, want one: abc", back.Data)
	}
}

// TestEmptySessionID: a group-id that is the empty string is the session
// "" (the Go SDK's TestSessionReceiver_blankSessionIDs sends one), not the
// absence of a session; it survives decoding and encoding, and go-amqp reads
// it back as a set GroupID.
func TestEmptySessionID(t *testing.T) {
	empty := ""
	b, err := (&amqp.Message{Properties: &amqp.MessageProperties{GroupID: &empty}, Data: [][]byte{[]byte("x")}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if !m.SessionIDSet || m.SessionID != "" || !m.HasSessionID() {
		t.Fatalf("decoded SessionID %q, SessionIDSet %v", m.SessionID, m.SessionIDSet)
	}
	var back amqp.Message
	if err := back.UnmarshalBinary(EncodeMessage(nil, m, EncodeOptions{})); err != nil {
		t.Fatal(err)
	}
	if back.Properties == nil || back.Properties.GroupID == nil || *back.Properties.GroupID != "" {
		t.Fatalf("encoded group-id %+v", back.Properties)
	}
	// No group-id at all stays no session.
	none, err := DecodeMessage(EncodeMessage(nil, &broker.Message{Body: []byte("x")}, EncodeOptions{}))
	if err != nil || none.HasSessionID() {
		t.Fatalf("a message without group-id has a session: %+v, %v", none, err)
	}
}

// TestNullBrokerAnnotationsIgnored: null values of the annotations only the
// broker sets are ignored, as Service Bus ignores them (the Go SDK's
// TestNilPartitionKey); null string annotations read as unset; null values
// that Service Bus refuses are refused.
func TestNullBrokerAnnotationsIgnored(t *testing.T) {
	msg := &amqp.Message{
		Annotations: amqp.Annotations{
			"x-opt-partition-key": nil, "x-opt-deadletter-source": nil, "x-opt-via-partition-key": nil,
			"x-opt-locked-until": nil, "x-opt-sequence-number": nil, "x-opt-enqueued-time": nil, "xopt-lock-token": nil,
		},
		Value: "hello",
	}
	b, err := msg.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.PartitionKey != "" || m.DeadLetterSource != "" || m.SequenceNumber != 0 || !m.LockedUntil.IsZero() || !m.EnqueuedTime.IsZero() || m.BodyKind != broker.BodyValue {
		t.Fatalf("decoded %+v", m)
	}
	for _, key := range []string{"x-opt-scheduled-enqueue-time", "x-opt-message-state", "x-opt-enqueue-sequence-number"} {
		b, err := (&amqp.Message{Annotations: amqp.Annotations{key: nil}, Value: "x"}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeMessage(b); !errors.Is(err, broker.ErrInvalid) || !strings.Contains(err.Error(), key) {
			t.Errorf("null %s: %v", key, err)
		}
	}
}

// TestDeliveredHeaderFields: a delivered message's header always carries
// durable (the sender's value) and first-acquirer (false), as Service Bus
// sends them; the JavaScript SDK's AmqpAnnotatedMessage test expects both.
func TestDeliveredHeaderFields(t *testing.T) {
	for _, durable := range []bool{false, true} {
		m := &broker.Message{MessageID: "h", DeliveryCount: 1, AMQP: &broker.Passthrough{Durable: durable}}
		if !durable {
			m.AMQP = nil
		}
		d := NewDecoder(EncodeMessage(nil, m, EncodeOptions{DeliveryCount: true}))
		f, err := d.readComposite(descHeader)
		if err != nil {
			t.Fatal(err)
		}
		var gotDurable, firstAcquirer bool
		var priority uint8
		var ttl, dc uint32
		hasDurable := field(&f, &gotDurable, (*Decoder).ReadBool)
		field(&f, &priority, (*Decoder).ReadUbyte)
		field(&f, &ttl, (*Decoder).ReadUint)
		hasFirst := field(&f, &firstAcquirer, (*Decoder).ReadBool)
		hasDC := field(&f, &dc, (*Decoder).ReadUint)
		if err := f.finish(); err != nil {
			t.Fatal(err)
		}
		if !hasDurable || gotDurable != durable || !hasFirst || firstAcquirer || !hasDC || dc != 0 {
			t.Fatalf("durable %v: header durable %v (present %v), first-acquirer %v (present %v), delivery-count %d (present %v)",
				durable, gotDurable, hasDurable, firstAcquirer, hasFirst, dc, hasDC)
		}
	}
}

// TestTTLBeyondTheHeader: a time to live longer than the header's ttl holds
// (2^32-1 ms, about 49.7 days) arrives as that ttl plus an
// absolute-expiry-time, the JavaScript SDK's way; it is read as the
// absolute-expiry-time minus the creation-time, and delivered the same way
// (ttl capped, creation-time + real ttl = absolute-expiry-time), which the
// SDK reads back as the real time to live.
func TestTTLBeyondTheHeader(t *testing.T) {
	const days100 = 100 * 24 * time.Hour
	created := t0
	exp := created.Add(days100)
	sent := &amqp.Message{
		Header:     &amqp.MessageHeader{TTL: maxHeaderTTL},
		Properties: &amqp.MessageProperties{MessageID: "long", CreationTime: &created, AbsoluteExpiryTime: &exp},
		Data:       [][]byte{[]byte("x")},
	}
	b, err := sent.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMessage(b)
	if err != nil || got.TimeToLive != days100 {
		t.Fatalf("decoded time to live %v, %v; want %v", got.TimeToLive, err, days100)
	}
	// A ttl below the cap is the time to live, whatever the expiry says.
	sent.Header.TTL = time.Hour
	b, _ = sent.MarshalBinary()
	if got, err := DecodeMessage(b); err != nil || got.TimeToLive != time.Hour {
		t.Fatalf("decoded time to live %v, %v; want 1h", got.TimeToLive, err)
	}

	enq := t0.Add(1234567 * time.Microsecond)
	m := &broker.Message{MessageID: "long", DeliveryCount: 1, TimeToLive: days100, EnqueuedTime: enq, ExpiresAt: enq.Add(days100)}
	var out amqp.Message
	if err := out.UnmarshalBinary(EncodeMessage(nil, m, EncodeOptions{DeliveryCount: true})); err != nil {
		t.Fatal(err)
	}
	if out.Header == nil || out.Header.TTL != maxHeaderTTL {
		t.Fatalf("delivered header %+v, want ttl %v", out.Header, maxHeaderTTL)
	}
	p := out.Properties
	if p == nil || p.CreationTime == nil || p.AbsoluteExpiryTime == nil || p.AbsoluteExpiryTime.Sub(*p.CreationTime) != days100 {
		t.Fatalf("delivered properties %+v: want absolute-expiry-time - creation-time = %v", p, days100)
	}
	// A message that never expires has no ttl.
	never := &broker.Message{MessageID: "never", DeliveryCount: 1, TimeToLive: broker.MaxTimeToLive, EnqueuedTime: enq}
	out = amqp.Message{}
	if err := out.UnmarshalBinary(EncodeMessage(nil, never, EncodeOptions{DeliveryCount: true})); err != nil {
		t.Fatal(err)
	}
	if out.Header == nil || out.Header.TTL != 0 || out.Properties.AbsoluteExpiryTime != nil {
		t.Fatalf("never expiring: header %+v, expiry %v", out.Header, out.Properties.AbsoluteExpiryTime)
	}
}
