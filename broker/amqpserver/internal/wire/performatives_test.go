package wire

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// frameRoundTrip encodes p in a frame and decodes it back.
func frameRoundTrip(t *testing.T, typ FrameType, channel uint16, p Performative) Frame {
	t.Helper()
	b, err := AppendFrame(nil, typ, channel, p)
	if err != nil {
		t.Fatalf("AppendFrame(%T): %v", p, err)
	}
	fr, n, err := DecodeFrame(b)
	if err != nil {
		t.Fatalf("DecodeFrame(%T % x): %v", p, b, err)
	}
	if n != len(b) {
		t.Fatalf("DecodeFrame consumed %d of %d bytes", n, len(b))
	}
	if fr.Type != typ || fr.Channel != channel {
		t.Fatalf("frame type %d channel %d, want %d %d", fr.Type, fr.Channel, typ, channel)
	}
	return fr
}

func TestPerformativeRoundTrip(t *testing.T) {
	props := Map{{Symbol("com.microsoft:tracking-id"), "abc"}, {Symbol("n"), int64(1)}}
	caps := []Symbol{"cap-a", "cap-b"}
	errFull := &Error{Condition: CondNotFound, Description: "no such queue", Info: Map{{Symbol("k"), "v"}}}
	cases := []Performative{
		&Open{ContainerID: "c1", Hostname: "localhost", MaxFrameSize: 65536, ChannelMax: Some[uint16](0),
			IdleTimeout: 60000, OutgoingLocales: []Symbol{"en-US"}, IncomingLocales: []Symbol{"en-US"},
			OfferedCapabilities: caps, DesiredCapabilities: []Symbol{"x"}, Properties: props},
		&Open{ContainerID: "minimal"},
		&Begin{RemoteChannel: Some[uint16](3), NextOutgoingID: 1, IncomingWindow: 5000, OutgoingWindow: 4000,
			HandleMax: Some[uint32](255), OfferedCapabilities: caps, DesiredCapabilities: caps, Properties: props},
		&Begin{NextOutgoingID: 0, IncomingWindow: 0, OutgoingWindow: 0},
		&Attach{Name: "link-1", Handle: 7, Role: RoleReceiver,
			SndSettleMode: Some(SenderSettleMixed), RcvSettleMode: Some(ReceiverSettleSecond),
			Source: &Source{Address: "q1", Durable: DurabilityUnsettled, ExpiryPolicy: ExpiryNever, Timeout: 30,
				Dynamic: true, DynamicNodeProperties: Map{{Symbol("lifetime-policy"), Described{uint64(0x2b), []any{}}}},
				DistributionMode: DistributionCopy,
				Filter:           Map{{Symbol("com.microsoft:session-filter"), Described{Symbol("com.microsoft:session-filter"), "s1"}}},
				DefaultOutcome:   Modified{DeliveryFailed: true}, Outcomes: []Symbol{"amqp:accepted:list"}, Capabilities: caps},
			Target:               &Target{Address: "reply-to", Durable: 1, ExpiryPolicy: ExpiryLinkDetach, Timeout: 1, Dynamic: true, DynamicNodeProperties: props, Capabilities: caps},
			Unsettled:            Map{{[]byte{1, 2}, Described{uint64(0x24), []any{}}}},
			IncompleteUnsettled:  true,
			InitialDeliveryCount: 0, // not written for a receiver
			MaxMessageSize:       1 << 20,
			OfferedCapabilities:  caps, DesiredCapabilities: caps, Properties: props},
		&Attach{Name: "sender", Handle: 0, Role: RoleSender, Target: &Target{Address: "q"}, InitialDeliveryCount: 0},
		&Attach{Name: "txn", Handle: 1, Role: RoleSender, Coordinator: &Coordinator{Capabilities: []Symbol{"amqp:local-transactions"}}},
		&Flow{NextIncomingID: Some[uint32](1), IncomingWindow: 2, NextOutgoingID: 3, OutgoingWindow: 4,
			Handle: Some[uint32](0), DeliveryCount: Some[uint32](5), LinkCredit: Some[uint32](1000), Available: Some[uint32](6),
			Drain: true, Echo: true, Properties: props},
		&Flow{IncomingWindow: 2, NextOutgoingID: 3, OutgoingWindow: 4},
		&Transfer{Handle: 1, DeliveryID: Some[uint32](2), DeliveryTag: []byte{1, 2, 3}, MessageFormat: Some(MessageFormatBatch),
			Settled: true, More: true, RcvSettleMode: Some(ReceiverSettleFirst), State: Received{SectionNumber: 1, SectionOffset: 2},
			Resume: true, Aborted: true, Batchable: true, Payload: []byte("payload bytes")},
		&Transfer{Handle: 1},
		&Disposition{Role: RoleReceiver, First: 1, Last: Some[uint32](9), Settled: true, State: Accepted{}, Batchable: true},
		&Disposition{Role: RoleSender, First: 4, State: Rejected{Error: errFull}},
		&Disposition{Role: RoleReceiver, First: 4, State: Released{}},
		&Disposition{Role: RoleReceiver, First: 4, State: Modified{DeliveryFailed: true, UndeliverableHere: true, MessageAnnotations: Map{{Symbol("p"), "v"}}}},
		&Disposition{Role: RoleReceiver, First: 4, State: OtherState{Described{uint64(0x34), []any{[]byte("txn-id"), Described{uint64(0x24), []any{}}}}}},
		&Detach{Handle: 3, Closed: true, Error: errFull},
		&Detach{Handle: 0},
		&End{Error: &Error{Condition: CondWindowViolation}},
		&End{},
		&Close{Error: errFull},
		&Close{},
	}
	for _, p := range cases {
		fr := frameRoundTrip(t, FrameAMQP, 5, p)
		if !reflect.DeepEqual(fr.Body, p) {
			t.Errorf("round trip of %T:\n got %#v\nwant %#v", p, fr.Body, p)
		}
	}
	sasl := []Performative{
		&SASLMechanisms{Mechanisms: []Symbol{MechanismAnonymous, MechanismPlain}},
		&SASLInit{Mechanism: MechanismPlain, InitialResponse: []byte("\x00user\x00pass"), Hostname: "host"},
		&SASLInit{Mechanism: MechanismAnonymous},
		&SASLChallenge{Challenge: []byte("c")},
		&SASLResponse{Response: []byte("r")},
		&SASLOutcome{Code: SASLAuth, AdditionalData: []byte("more")},
		&SASLOutcome{Code: SASLOK},
	}
	for _, p := range sasl {
		fr := frameRoundTrip(t, FrameSASL, 0, p)
		if !reflect.DeepEqual(fr.Body, p) {
			t.Errorf("round trip of %T:\n got %#v\nwant %#v", p, fr.Body, p)
		}
	}
}

func TestPerformativeExactBytes(t *testing.T) {
	cases := []struct {
		p    Performative
		want []byte
	}{
		// Trailing nulls are omitted: close with no error is an empty list.
		{&Close{}, []byte{0x00, 0x53, 0x18, 0x45}},
		{&End{}, []byte{0x00, 0x53, 0x17, 0x45}},
		// Inner nulls stay.
		{&Open{ContainerID: "c", MaxFrameSize: 512}, []byte{0x00, 0x53, 0x10, 0xc0, 0x0a, 0x03, 0xa1, 1, 'c', 0x40, 0x70, 0, 0, 2, 0}},
		{&Detach{Handle: 1, Closed: true}, []byte{0x00, 0x53, 0x16, 0xc0, 0x04, 0x02, 0x52, 1, 0x41}},
		{&Disposition{Role: RoleReceiver, First: 0, Settled: true, State: Accepted{}},
			[]byte{0x00, 0x53, 0x15, 0xc0, 0x09, 0x05, 0x41, 0x43, 0x40, 0x41, 0x00, 0x53, 0x24, 0x45}},
		{&Flow{IncomingWindow: 1, NextOutgoingID: 0, OutgoingWindow: 1, Handle: Some[uint32](0), LinkCredit: Some[uint32](1)},
			[]byte{0x00, 0x53, 0x13, 0xc0, 0x0b, 0x07, 0x40, 0x52, 1, 0x43, 0x52, 1, 0x43, 0x40, 0x52, 1}},
		{&SASLOutcome{Code: SASLOK}, []byte{0x00, 0x53, 0x44, 0xc0, 0x03, 0x01, 0x50, 0}},
	}
	for _, c := range cases {
		got, err := c.p.appendTo(nil)
		if err != nil {
			t.Fatalf("%T: %v", c.p, err)
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("%T encodes as % x\n                 want % x", c.p, got, c.want)
		}
	}
}

func TestAttachEchoesSettleModePresence(t *testing.T) {
	fr := frameRoundTrip(t, FrameAMQP, 0, &Attach{Name: "n", Handle: 1, Role: RoleSender, RcvSettleMode: Some(ReceiverSettleFirst)})
	a := fr.Body.(*Attach)
	if a.SndSettleMode.Set {
		t.Fatal("absent snd-settle-mode decoded as set")
	}
	if v, ok := a.RcvSettleMode.Get(); !ok || v != ReceiverSettleFirst {
		t.Fatalf("rcv-settle-mode = %v %v, want first, set", v, ok)
	}
}

func TestDecodeShortListsAndDefaults(t *testing.T) {
	// open with only the container id, written by hand.
	body := []byte{0x00, 0x53, 0x10, 0xc0, 0x04, 0x01, 0xa1, 1, 'x'}
	p, err := DecodePerformative(FrameAMQP, body)
	if err != nil {
		t.Fatal(err)
	}
	o := p.(*Open)
	if o.ContainerID != "x" || o.FrameSizeMax() != DefaultMaxFrameSize || o.ChannelMaxValue() != DefaultChannelMax || o.IdleTimeout != 0 {
		t.Fatalf("open = %#v", o)
	}
	// begin written with the full ulong descriptor and list32 form.
	body = []byte{0x00, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x11, 0xd0, 0, 0, 0, 0x0a, 0, 0, 0, 4, 0x40, 0x43, 0x52, 9, 0x52, 8}
	p, err = DecodePerformative(FrameAMQP, body)
	if err != nil {
		t.Fatal(err)
	}
	bg := p.(*Begin)
	if bg.RemoteChannel.Set || bg.IncomingWindow != 9 || bg.OutgoingWindow != 8 || bg.HandleMaxValue() != DefaultHandleMax {
		t.Fatalf("begin = %#v", bg)
	}
	// Symbolic descriptor, with an extra unknown trailing field skipped.
	body = AppendSymbol([]byte{0x00}, "amqp:close:list")
	body = append(body, 0xc0, 0x03, 0x02, 0x40, 0x41)
	p, err = DecodePerformative(FrameAMQP, body)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.(*Close); c.Error != nil {
		t.Fatalf("close = %#v", c)
	}
	// Multiple symbols sent as one symbol.
	body = []byte{0x00, 0x53, 0x40, 0xc0, 0x08, 0x01, 0xa3, 0x05, 'P', 'L', 'A', 'I', 'N'}
	p, err = DecodePerformative(FrameSASL, body)
	if err != nil {
		t.Fatal(err)
	}
	if m := p.(*SASLMechanisms); !reflect.DeepEqual(m.Mechanisms, []Symbol{"PLAIN"}) {
		t.Fatalf("mechanisms = %#v", m.Mechanisms)
	}
}

func TestDecodePerformativeErrors(t *testing.T) {
	cases := []struct {
		name string
		typ  FrameType
		body []byte
		msg  string
	}{
		{"attach without role", FrameAMQP, []byte{0x00, 0x53, 0x12, 0xc0, 0x05, 0x02, 0xa1, 1, 'n', 0x43}, "attach: mandatory field role is missing"},
		{"open with null container", FrameAMQP, []byte{0x00, 0x53, 0x10, 0xc0, 0x02, 0x01, 0x40}, "open: mandatory field container-id is missing"},
		{"flow empty", FrameAMQP, []byte{0x00, 0x53, 0x13, 0x45}, "flow: mandatory field incoming-window is missing"},
		{"wrong field type", FrameAMQP, []byte{0x00, 0x53, 0x16, 0xc0, 0x03, 0x01, 0xa1, 0}, "constructor 0xa1 where an unsigned integer was expected"},
		{"sasl in amqp frame", FrameAMQP, []byte{0x00, 0x53, 0x41, 0x45}, "sasl-init is not a performative"},
		{"open in sasl frame", FrameSASL, []byte{0x00, 0x53, 0x10, 0x45}, "open in a SASL frame"},
		{"not described", FrameAMQP, []byte{0x45}, "constructor 0x45 where a described type was expected"},
		{"unknown descriptor", FrameAMQP, []byte{0x00, 0x53, 0x99, 0x45}, "described type 0x99 is not a performative"},
		{"field beyond list", FrameAMQP, []byte{0x00, 0x53, 0x16, 0xc0, 0x02, 0x01, 0x70, 0, 0, 0, 1}, "need 4 bytes, 0 left"},
		{"rcv settle mode 5", FrameAMQP, []byte{0x00, 0x53, 0x12, 0xc0, 0x09, 0x05, 0xa1, 1, 'n', 0x43, 0x41, 0x40, 0x50, 5}, "rcv-settle-mode 5 out of range"},
		{"long delivery tag", FrameAMQP, append([]byte{0x00, 0x53, 0x14, 0xc0, 0x26, 0x03, 0x43, 0x43, 0xa0, 33}, make([]byte, 33)...), "delivery-tag of 33 bytes"},
		{"error without condition", FrameAMQP, []byte{0x00, 0x53, 0x18, 0xc0, 0x05, 0x01, 0x00, 0x53, 0x1d, 0x45}, "error: mandatory field condition is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodePerformative(c.typ, c.body)
			if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error = %v, want %q", err, c.msg)
			}
		})
	}
}

func TestTransferPayloadAliasesFrame(t *testing.T) {
	b, err := AppendFrame(nil, FrameAMQP, 1, &Transfer{Handle: 2, DeliveryID: Some[uint32](0), DeliveryTag: []byte{9}, Payload: []byte{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	fr, _, err := DecodeFrame(b)
	if err != nil {
		t.Fatal(err)
	}
	tr := fr.Body.(*Transfer)
	if !bytes.Equal(tr.Payload, []byte{1, 2, 3}) || cap(tr.Payload) != 3 {
		t.Fatalf("payload % x cap %d", tr.Payload, cap(tr.Payload))
	}
	b[len(b)-1] = 7
	if tr.Payload[2] != 7 {
		t.Fatal("payload does not alias the frame buffer")
	}
}

func TestRoleString(t *testing.T) {
	if RoleSender.String() != "sender" || RoleReceiver.String() != "receiver" {
		t.Fatal(RoleSender.String(), RoleReceiver.String())
	}
	e := &Error{Condition: CondNotFound, Description: "gone"}
	if e.Error() != "amqp:not-found: gone" || (&Error{Condition: "x"}).Error() != "x" {
		t.Fatal(e.Error())
	}
}
