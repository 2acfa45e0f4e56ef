package atom

import (
	"encoding/xml"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
)

// TestValues round-trips typed values through their XML Schema form: Go
// value → NewValue → XML → Value → Decode.
func TestValues(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	tests := []struct {
		in  any
		xml string
		out any
	}{
		{"eu", `<Value i:type="d6p1:string" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">eu</Value>`, "eu"},
		{" spaced ", `<Value i:type="d6p1:string" xmlns:d6p1="http://www.w3.org/2001/XMLSchema"> spaced </Value>`, " spaced "},
		{`a&"b"<c>`, `<Value i:type="d6p1:string" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">a&amp;&#34;b&#34;&lt;c&gt;</Value>`, `a&"b"<c>`},
		{true, `<Value i:type="d6p1:boolean" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">true</Value>`, true},
		{int32(-7), `<Value i:type="d6p1:int" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">-7</Value>`, int64(-7)},
		{int64(1) << 40, `<Value i:type="d6p1:long" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">1099511627776</Value>`, int64(1) << 40},
		{uint64(1) << 63, `<Value i:type="d6p1:unsignedLong" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">9223372036854775808</Value>`, uint64(1) << 63},
		{2.5, `<Value i:type="d6p1:double" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">2.5</Value>`, 2.5},
		{float32(0.25), `<Value i:type="d6p1:double" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">0.25</Value>`, 0.25},
		{at, `<Value i:type="d6p1:dateTime" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">2025-01-02T03:04:05.0000006Z</Value>`, at},
		{90 * time.Second, `<Value i:type="d6p1:duration" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">PT1M30S</Value>`, 90 * time.Second},
		{broker.MaxTimeToLive, `<Value i:type="d6p1:duration" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">` + MaxDuration + `</Value>`, broker.MaxTimeToLive},
		{[]byte{1, 2}, `<Value i:type="d6p1:base64Binary" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">AQI=</Value>`, []byte{1, 2}},
		{id, `<Value i:type="d6p1:string" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">11111111-2222-3333-4444-555555555555</Value>`, id.String()},
		{nil, `<Value i:nil="true"></Value>`, nil},
	}
	for _, tc := range tests {
		b, err := xml.Marshal(NewValue(tc.in))
		if err != nil || string(b) != tc.xml {
			t.Errorf("NewValue(%#v) wrote %s, %v; want %s", tc.in, b, err, tc.xml)
			continue
		}
		var v Value
		if err := xml.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		out, err := v.Decode()
		if err != nil || !reflect.DeepEqual(out, tc.out) {
			t.Errorf("Decode of %s = %#v, %v; want %#v", b, out, err, tc.out)
		}
	}
}

// TestDecodeValues reads what other writers send: other prefixes, types
// this package does not write, and malformed text, each with a typed
// error.
func TestDecodeValues(t *testing.T) {
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	for _, tc := range []struct {
		xml string
		out any
		err string
	}{
		{`<Value xmlns:i="http://www.w3.org/2001/XMLSchema-instance" xmlns:d5p1="http://www.w3.org/2001/XMLSchema" i:type="d5p1:string">world</Value>`, "world", ""},
		{`<Value xmlns:x="http://www.w3.org/2001/XMLSchema-instance" x:type="short"> 12 </Value>`, int64(12), ""},
		{`<Value i:type="d1:unsignedByte">255</Value>`, uint64(255), ""},
		{`<Value i:type="d1:float">1.5</Value>`, 1.5, ""},
		{`<Value i:type="d1:decimal">10.25</Value>`, 10.25, ""},
		{`<Value i:type="d1:guid">11111111-2222-3333-4444-555555555555</Value>`, id, ""},
		{`<Value i:type="d1:boolean">1</Value>`, true, ""},
		{`<Value i:nil="1"/>`, nil, ""},
		{`<Value>untyped</Value>`, "untyped", ""},
		{`<Value i:type="d1:int">x</Value>`, nil, `"x" is not a valid int`},
		{`<Value i:type="d1:boolean">yes</Value>`, nil, `"yes" is not a valid boolean`},
		{`<Value i:type="d1:dateTime">yesterday</Value>`, nil, `"yesterday" is not a valid dateTime`},
		{`<Value i:type="d1:base64Binary">***</Value>`, nil, `"***" is not a valid base64Binary`},
		{`<Value i:type="d1:duration">30 seconds</Value>`, nil, `"30 seconds" is not an ISO 8601 duration such as PT30S, PT1H30M or P1D: it must start with P`},
		{`<Value i:type="d1:QName">x</Value>`, nil, `the type "QName" is not supported`},
	} {
		var v Value
		if err := xml.Unmarshal([]byte(tc.xml), &v); err != nil {
			t.Fatalf("%s: %v", tc.xml, err)
		}
		out, err := v.Decode()
		switch {
		case tc.err == "" && (err != nil || !reflect.DeepEqual(out, tc.out)):
			t.Errorf("%s: %#v, %v; want %#v", tc.xml, out, err, tc.out)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: %#v, %v; want the error %s", tc.xml, out, err, tc.err)
		}
		var se *SyntaxError
		var de *DurationError
		var ue *UnsupportedTypeError
		if err != nil && !errors.As(err, &se) && !errors.As(err, &de) && !errors.As(err, &ue) {
			t.Errorf("%s: %T is not a typed error of this package", tc.xml, err)
		}
	}
}

// TestKeyValuesInKeyOrder: NewKeyValues writes the values in key order,
// and nothing for none.
func TestKeyValuesInKeyOrder(t *testing.T) {
	if NewKeyValues(nil) != nil {
		t.Fatal("no values should be no element")
	}
	kv := NewKeyValues(map[string]any{"b": 1, "a": "x", "c": nil})
	var keys []string
	for _, it := range kv.Items {
		keys = append(keys, it.Key)
	}
	if !reflect.DeepEqual(keys, []string{"a", "b", "c"}) || !kv.Items[2].Value.Nil {
		t.Fatalf("%+v", kv)
	}
}
