package wire

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// TestEncodedPropertiesFieldEchoesIDTypes: a request's message-id of each
// type the specification allows comes out encoded as it was sent, after a
// header and with null fields before a later one, and a response encoded
// with it as correlation-id carries the same value, which DecodeMessage
// reads as its text.
func TestEncodedPropertiesFieldEchoesIDTypes(t *testing.T) {
	u := UUID{0: 1, 15: 2}
	for _, tc := range []struct {
		id   any
		text string
	}{
		{uint64(0), "0"},
		{uint64(1 << 40), "1099511627776"},
		{u, "01000000-0000-0000-0000-000000000002"},
		{[]byte{0xab, 0xcd}, "abcd"},
		{"req-1", "req-1"},
	} {
		b := append(AppendDescriptor(nil, descHeader), codeList0)
		b = AppendDescriptor(b, descProperties)
		b, err := AppendList(b, []any{tc.id, nil, nil, nil, nil, "corr"})
		if err != nil {
			t.Fatal(err)
		}
		b = AppendNull(AppendDescriptor(b, descAMQPValue))
		raw := EncodedPropertiesField(b, FieldMessageID)
		if v, _, err := DecodeValue(raw); err != nil || !reflect.DeepEqual(v, tc.id) {
			t.Errorf("%v: message-id read back as %#v (%v)", tc.id, v, err)
		}
		if v, _, _ := DecodeValue(EncodedPropertiesField(b, FieldCorrelationID)); v != "corr" {
			t.Errorf("%v: correlation-id %#v, want corr", tc.id, v)
		}
		if got := EncodedPropertiesField(b, 4); got != nil {
			t.Errorf("%v: the null reply-to read as %x", tc.id, got)
		}
		if got := EncodedPropertiesField(b, 7); got != nil {
			t.Errorf("%v: a field beyond the list read as %x", tc.id, got)
		}

		resp := EncodeMessage(nil, &broker.Message{CorrelationID: "ignored"}, EncodeOptions{CorrelationID: raw})
		if got := EncodedPropertiesField(resp, FieldCorrelationID); !bytes.Equal(got, raw) {
			t.Errorf("%v: response correlation-id %x, want %x", tc.id, got, raw)
		}
		m, err := DecodeMessage(resp)
		if err != nil || m.CorrelationID != tc.text {
			t.Errorf("%v: response decodes with correlation-id %q (%v), want %q", tc.id, m.CorrelationID, err, tc.text)
		}
	}
}

// TestEncodedPropertiesFieldWithout: no properties section, an empty one,
// and bytes that are no message give nil.
func TestEncodedPropertiesFieldWithout(t *testing.T) {
	for name, b := range map[string][]byte{
		"no properties": AppendNull(AppendDescriptor(append(AppendDescriptor(nil, descHeader), codeList0), descAMQPValue)),
		"empty":         append(AppendDescriptor(nil, descProperties), codeList0),
		"garbage":       {0xff, 0x00},
		"nothing":       nil,
	} {
		if got := EncodedPropertiesField(b, FieldMessageID); got != nil {
			t.Errorf("%s: %x, want nil", name, got)
		}
	}
}
