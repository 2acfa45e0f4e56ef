package wire

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/peeklock/peeklock/broker"
)

// fuzzSeedFrames returns valid frames of every kind as seeds.
func fuzzSeedFrames(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	add := func(typ FrameType, p Performative) {
		b, err := AppendFrame(nil, typ, 1, p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	add(FrameAMQP, &Open{ContainerID: "c", MaxFrameSize: 65536, OfferedCapabilities: []Symbol{"a"}, Properties: Map{{Symbol("p"), int64(1)}}})
	add(FrameAMQP, &Begin{RemoteChannel: Some[uint16](1), NextOutgoingID: 1, IncomingWindow: 2, OutgoingWindow: 3})
	add(FrameAMQP, &Attach{Name: "l", Handle: 1, Role: RoleReceiver, RcvSettleMode: Some(ReceiverSettleSecond),
		Source: &Source{Address: "q", Filter: Map{{Symbol("f"), Described{Symbol("f"), "x"}}}, DefaultOutcome: Accepted{}},
		Target: &Target{Address: "t"}, MaxMessageSize: 1024})
	add(FrameAMQP, &Flow{IncomingWindow: 1, NextOutgoingID: 2, OutgoingWindow: 3, Handle: Some[uint32](0), LinkCredit: Some[uint32](10)})
	add(FrameAMQP, &Transfer{Handle: 0, DeliveryID: Some[uint32](0), DeliveryTag: []byte{1, 2}, MessageFormat: Some[uint32](0),
		Payload: EncodeMessage(nil, &broker.Message{MessageID: "m", Body: []byte("x")}, EncodeOptions{})})
	add(FrameAMQP, &Disposition{Role: RoleReceiver, First: 1, Settled: true, State: Rejected{Error: &Error{Condition: CondDeadLetter, Info: Map{{"DeadLetterReason", "r"}}}}})
	add(FrameAMQP, &Disposition{Role: RoleReceiver, First: 1, State: Modified{UndeliverableHere: true, MessageAnnotations: Map{{Symbol("k"), "v"}}}})
	add(FrameAMQP, &Detach{Handle: 1, Closed: true, Error: &Error{Condition: CondNotFound, Description: "d"}})
	add(FrameAMQP, &End{})
	add(FrameAMQP, &Close{Error: &Error{Condition: CondFramingError}})
	add(FrameSASL, &SASLMechanisms{Mechanisms: []Symbol{MechanismAnonymous, MechanismPlain}})
	add(FrameSASL, &SASLInit{Mechanism: MechanismPlain, InitialResponse: []byte("\x00u\x00p")})
	add(FrameSASL, &SASLOutcome{Code: SASLOK})
	seeds = append(seeds, AppendEmptyFrame(nil))
	return seeds
}

func FuzzDecodeFrame(f *testing.F) {
	for _, s := range fuzzSeedFrames(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, n, err := DecodeFrame(data)
		// The stream reader must agree with DecodeFrame on the first frame.
		r := NewFrameReader(bytes.NewReader(data), 1<<20)
		_, rerr := r.ReadFrame()
		if err == nil && rerr != nil {
			t.Fatalf("DecodeFrame succeeded, FrameReader failed: %v", rerr)
		}
		if err != nil {
			return
		}
		if n > len(data) {
			t.Fatalf("consumed %d of %d bytes", n, len(data))
		}
		// What decodes must encode, and encode stably.
		enc1, err := AppendFrame(nil, fr.Type, fr.Channel, fr.Body)
		if err != nil {
			t.Fatalf("re-encoding %T: %v", fr.Body, err)
		}
		fr2, _, err := DecodeFrame(enc1)
		if err != nil {
			t.Fatalf("decoding re-encoded %T: %v", fr.Body, err)
		}
		enc2, err := AppendFrame(nil, fr2.Type, fr2.Channel, fr2.Body)
		if err != nil || !bytes.Equal(enc1, enc2) {
			t.Fatalf("unstable encoding of %T: % x\nthen % x (%v)", fr.Body, enc1, enc2, err)
		}
	})
}

func FuzzDecodeMessage(f *testing.F) {
	f.Add(EncodeMessage(nil, fullMessage(), EncodeOptions{LockToken: true, DeliveryCount: true}))
	f.Add(EncodeMessage(nil, &broker.Message{MessageID: "x", Body: []byte("b")}, EncodeOptions{}))
	for _, m := range []*amqp.Message{
		amqpFull(),
		{Value: map[string]any{"k": []any{int64(1), "s"}}},
		{Sequence: [][]any{{"a"}, {true}}},
		{Properties: &amqp.MessageProperties{MessageID: amqp.UUID{1}}, Footer: amqp.Annotations{"f": "x"}},
		{Header: &amqp.MessageHeader{Durable: true, Priority: 9}, DeliveryAnnotations: amqp.Annotations{"d": int64(1)},
			Annotations: amqp.Annotations{"a": []any{"x"}}, Data: [][]byte{[]byte("a"), []byte("b")}},
	} {
		b, err := m.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMessage(data)
		_, _ = SplitBatch(data)
		if err != nil {
			return
		}
		opts := EncodeOptions{LockToken: true, DeliveryCount: true}
		enc := EncodeMessage(nil, m, opts)
		m2, err := DecodeMessage(enc)
		if err != nil {
			t.Fatalf("decoding the re-encoded message: %v\n% x", err, enc)
		}
		if m2.MessageID != m.MessageID || m2.SequenceNumber != m.SequenceNumber || m2.BodyKind != m.BodyKind ||
			!bytes.Equal(m2.Body, m.Body) || !slices.Equal(m2.DataSections, m.DataSections) || !reflect.DeepEqual(m2.AMQP, m.AMQP) ||
			len(m2.ApplicationProperties) != len(m.ApplicationProperties) {
			t.Fatalf("re-encoded message differs:\n%#v\n%#v", m, m2)
		}
	})
}

func FuzzDecodeValue(f *testing.F) {
	ts := time.UnixMilli(1700000000000).UTC()
	for _, v := range []any{
		nil, true, uint8(1), uint16(2), uint32(3), uint64(1 << 40), int8(-1), int16(-2), int32(-3), int64(-1 << 40),
		float32(1.5), 2.5, Decimal32{1}, Decimal64{2}, Decimal128{3}, Char('x'), ts, UUID{1}, []byte{1}, "s", Symbol("y"),
		[]any{int64(1), "a"}, Map{{Symbol("k"), []any{}}}, []Symbol{"a"}, []int64{1}, []UUID{{2}}, []time.Time{ts},
		[]Map{{{"m", []byte{1}}}}, Described{uint64(0x77), "v"}, Array{Code: codeList8, Elements: []any{[]any{true}}},
		Array{Descriptor: Symbol("d"), Code: codeStr8, Elements: []any{"x"}},
	} {
		b, err := AppendValue(nil, v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, n, err := DecodeValue(data)
		if err != nil {
			return
		}
		if n > len(data) {
			t.Fatalf("consumed %d of %d bytes", n, len(data))
		}
		enc1, err := AppendValue(nil, v)
		if err != nil {
			t.Fatalf("re-encoding %T: %v", v, err)
		}
		v2, n2, err := DecodeValue(enc1)
		if err != nil || n2 != len(enc1) {
			t.Fatalf("decoding re-encoded %T: %v (%d of %d bytes)", v, err, n2, len(enc1))
		}
		enc2, err := AppendValue(nil, v2)
		if err != nil || !bytes.Equal(enc1, enc2) {
			t.Fatalf("unstable encoding of %T: % x\nthen % x (%v)", v, enc1, enc2, err)
		}
	})
}
