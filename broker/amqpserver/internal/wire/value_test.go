package wire

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

func mustAppend(t *testing.T, v any) []byte {
	t.Helper()
	b, err := AppendValue(nil, v)
	if err != nil {
		t.Fatalf("AppendValue(%T %v): %v", v, v, err)
	}
	return b
}

func TestAppendValueExactBytes(t *testing.T) {
	ts := time.UnixMilli(0x0102030405).UTC()
	u := UUID{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	cases := []struct {
		name string
		v    any
		want []byte
	}{
		{"null", nil, []byte{0x40}},
		{"true", true, []byte{0x41}},
		{"false", false, []byte{0x42}},
		{"ubyte", uint8(7), []byte{0x50, 7}},
		{"ushort", uint16(0x0102), []byte{0x60, 1, 2}},
		{"uint0", uint32(0), []byte{0x43}},
		{"smalluint", uint32(255), []byte{0x52, 255}},
		{"uint", uint32(256), []byte{0x70, 0, 0, 1, 0}},
		{"ulong0", uint64(0), []byte{0x44}},
		{"smallulong", uint64(9), []byte{0x53, 9}},
		{"ulong", uint64(1 << 40), []byte{0x80, 0, 0, 1, 0, 0, 0, 0, 0}},
		{"byte", int8(-2), []byte{0x51, 0xfe}},
		{"short", int16(-2), []byte{0x61, 0xff, 0xfe}},
		{"smallint", int32(-128), []byte{0x54, 0x80}},
		{"int", int32(128), []byte{0x71, 0, 0, 0, 128}},
		{"smalllong", int64(127), []byte{0x55, 127}},
		{"long", int64(-129), []byte{0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
		{"int as long", 5, []byte{0x55, 5}},
		{"float", float32(1.5), []byte{0x72, 0x3f, 0xc0, 0, 0}},
		{"double", float64(-2), []byte{0x82, 0xc0, 0, 0, 0, 0, 0, 0, 0}},
		{"decimal32", Decimal32{1, 2, 3, 4}, []byte{0x74, 1, 2, 3, 4}},
		{"decimal64", Decimal64{1, 2, 3, 4, 5, 6, 7, 8}, []byte{0x84, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"decimal128", Decimal128(u), append([]byte{0x94}, u[:]...)},
		{"char", Char('€'), []byte{0x73, 0, 0, 0x20, 0xac}},
		{"timestamp", ts, []byte{0x83, 0, 0, 0, 1, 2, 3, 4, 5}},
		{"uuid", u, append([]byte{0x98}, u[:]...)},
		{"google uuid", uuid.UUID(u), append([]byte{0x98}, u[:]...)},
		{"lock token", broker.LockToken(u), append([]byte{0x98}, u[:]...)},
		{"vbin8", []byte{1, 2}, []byte{0xa0, 2, 1, 2}},
		{"str8", "hé", []byte{0xa1, 3, 'h', 0xc3, 0xa9}},
		{"sym8", Symbol("ab"), []byte{0xa3, 2, 'a', 'b'}},
		{"list0", []any{}, []byte{0x45}},
		{"list8", []any{true, uint32(0)}, []byte{0xc0, 3, 2, 0x41, 0x43}},
		{"map8", Map{{Symbol("k"), "v"}}, []byte{0xc1, 7, 2, 0xa3, 1, 'k', 0xa1, 1, 'v'}},
		{"empty map", Map{}, []byte{0xc1, 1, 0}},
		{"go map sorted", map[string]any{"b": true, "a": false}, []byte{0xc1, 9, 4, 0xa1, 1, 'a', 0x42, 0xa1, 1, 'b', 0x41}},
		{"symbol map", map[Symbol]any{"k": nil}, []byte{0xc1, 5, 2, 0xa3, 1, 'k', 0x40}},
		{"described", Described{uint64(0x77), "x"}, []byte{0x00, 0x53, 0x77, 0xa1, 1, 'x'}},
		{"described sym", Described{Symbol("d"), int64(1)}, []byte{0x00, 0xa3, 1, 'd', 0x55, 1}},
		{"timespan", 3 * time.Microsecond, []byte{0x00, 0xa3, 22, 'c', 'o', 'm', '.', 'm', 'i', 'c', 'r', 'o', 's', 'o', 'f', 't', ':', 't', 'i', 'm', 'e', 's', 'p', 'a', 'n', 0x55, 30}},
		{"symbol array", []Symbol{"a", "bc"}, []byte{0xe0, 7, 2, 0xa3, 1, 'a', 2, 'b', 'c'}},
		{"empty symbol array", []Symbol{}, []byte{0xe0, 2, 0, 0xa3}},
		{"long array", []int64{1, -1}, []byte{0xe0, 18, 2, 0x81, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"uuid array", []UUID{u}, append([]byte{0xe0, 18, 1, 0x98}, u[:]...)},
		{"timestamp array", []time.Time{ts}, []byte{0xe0, 10, 1, 0x83, 0, 0, 0, 1, 2, 3, 4, 5}},
		{"bool array", []bool{true, false}, []byte{0xe0, 4, 2, 0x56, 1, 0}},
		{"int array", []int32{-1}, []byte{0xe0, 6, 1, 0x71, 0xff, 0xff, 0xff, 0xff}},
		{"map array", []Map{{{"a", true}}}, []byte{0xe0, 14, 1, 0xd1, 0, 0, 0, 8, 0, 0, 0, 2, 0xa1, 1, 'a', 0x41}},
		{"described array", Array{Descriptor: uint64(0x24), Code: codeList0, Elements: []any{[]any{}, []any{}}}, []byte{0xe0, 5, 2, 0x00, 0x53, 0x24, 0x45}},
		{"ubyte array", Array{Code: codeUbyte, Elements: []any{uint8(1), uint8(2)}}, []byte{0xe0, 4, 2, 0x50, 1, 2}},
		{"list8 array", Array{Code: codeList8, Elements: []any{[]any{true}}}, []byte{0xe0, 5, 1, 0xc0, 2, 1, 0x41}},
		{"accepted", Accepted{}, []byte{0x00, 0x53, 0x24, 0x45}},
		{"error", &Error{Condition: "c"}, []byte{0x00, 0x53, 0x1d, 0xc0, 4, 1, 0xa3, 1, 'c'}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mustAppend(t, c.v)
			if !bytes.Equal(got, c.want) {
				t.Fatalf("AppendValue = % x\nwant          % x", got, c.want)
			}
		})
	}
}

func TestAppendValueLongForms(t *testing.T) {
	long := strings.Repeat("x", 256)
	b := mustAppend(t, long)
	if b[0] != 0xb1 || !bytes.Equal(b[1:5], []byte{0, 0, 1, 0}) || len(b) != 5+256 {
		t.Fatalf("str32 header % x, len %d", b[:5], len(b))
	}
	b = mustAppend(t, Symbol(long))
	if b[0] != 0xb3 {
		t.Fatalf("sym32 constructor 0x%02x", b[0])
	}
	b = mustAppend(t, []byte(long))
	if b[0] != 0xb0 {
		t.Fatalf("vbin32 constructor 0x%02x", b[0])
	}
	// A list whose body exceeds 255 bytes takes the 32-bit form.
	b = mustAppend(t, []any{long})
	want := []byte{0xd0, 0, 0, 1, 9, 0, 0, 0, 1, 0xb1}
	if !bytes.Equal(b[:10], want) {
		t.Fatalf("list32 header % x, want % x", b[:10], want)
	}
	// More than 255 elements takes the 32-bit form even when small.
	items := make([]any, 300)
	b = mustAppend(t, items)
	if b[0] != 0xd0 || len(b) != 9+300 {
		t.Fatalf("list32 of nulls: constructor 0x%02x len %d", b[0], len(b))
	}
	b = mustAppend(t, []string{long})
	if b[0] != 0xf0 || b[9] != 0xb1 {
		t.Fatalf("array32 of str32: % x", b[:10])
	}
}

// roundTrip encodes v, decodes it, and compares with want.
func roundTrip(t *testing.T, v, want any) {
	t.Helper()
	b := mustAppend(t, v)
	got, n, err := DecodeValue(b)
	if err != nil {
		t.Fatalf("DecodeValue(% x): %v", b, err)
	}
	if n != len(b) {
		t.Fatalf("DecodeValue consumed %d of %d bytes", n, len(b))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip of %T:\n got %#v\nwant %#v", v, got, want)
	}
}

func TestValueRoundTrip(t *testing.T) {
	ts := time.Date(2025, 3, 4, 5, 6, 7, 8_000_000, time.UTC)
	u := UUID(uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8"))
	same := []any{
		nil, true, false,
		uint8(0), uint8(255), uint16(65535), uint32(0), uint32(200), uint32(math.MaxUint32),
		uint64(0), uint64(100), uint64(math.MaxUint64),
		int8(math.MinInt8), int16(math.MinInt16), int32(math.MinInt32), int32(-5), int32(math.MaxInt32),
		int64(math.MinInt64), int64(-1), int64(math.MaxInt64),
		float32(3.25), math.Inf(1), float64(-0.5),
		Decimal32{9, 8, 7, 6}, Decimal64{1}, Decimal128{2},
		Char('x'), Char(0x1F600),
		ts, u, []byte{0, 1, 2}, []byte{}, "", "text", Symbol("amqp:accepted:list"),
		[]any{}, []any{int64(1), "a", []any{Symbol("nested")}, Map{{uint64(1), nil}}},
		Map{}, Map{{Symbol("a"), int32(1)}, {"b", []byte("x")}, {uint64(7), Map{{"c", true}}}},
		Described{Descriptor: uint64(0x468C00000004), Value: "filter"},
		Described{Descriptor: Symbol("com.microsoft:uri"), Value: "http://x"},
		[]Symbol{"a", "b"}, []string{"x", strings.Repeat("y", 300)}, []UUID{u, {}},
		[]int64{1, math.MinInt64}, []int32{1, -1}, []int16{-3}, []int8{-4, 4},
		[]uint64{1 << 60}, []uint32{7}, []uint16{9}, []bool{true, false, true},
		[]float32{1.5}, []float64{-1.25}, []time.Time{ts, ts.Add(time.Second)},
		[][]byte{{1}, {}}, []Map{{{Symbol("message"), []byte{1, 2}}}, {}},
		Array{Code: codeUbyte, Elements: []any{uint8(1), uint8(2)}},
		Array{Code: codeChar, Elements: []any{Char('a')}},
		Array{Code: codeList8, Elements: []any{[]any{int64(1)}, []any{"x"}}},
		Array{Code: codeList32, Elements: []any{[]any{int64(1)}}},
		Array{Code: codeArray8, Elements: []any{[]Symbol{"a"}, []Symbol{}}},
		Array{Descriptor: uint64(0x24), Code: codeList0, Elements: []any{[]any{}}},
		Array{Descriptor: Symbol("x:y"), Code: codeStr8, Elements: []any{"p", "q"}},
		Array{Code: codeDecimal64, Elements: []any{Decimal64{1}}},
	}
	for _, v := range same {
		roundTrip(t, v, v)
	}
	// Conveniences decode to the value model's types.
	roundTrip(t, 7, int64(7))
	roundTrip(t, uint(7), uint64(7))
	roundTrip(t, uuid.UUID(u), u)
	roundTrip(t, broker.LockToken(u), u)
	roundTrip(t, map[string]any{"k": int16(2)}, Map{{"k", int16(2)}})
	roundTrip(t, 1500*time.Millisecond, Described{Descriptor: symTimeSpan, Value: int64(15_000_000)})
	roundTrip(t, Rejected{Error: &Error{Condition: "c", Description: "d"}},
		Described{uint64(0x25), []any{Described{uint64(0x1d), []any{Symbol("c"), "d"}}}})
	type named string
	roundTrip(t, named("n"), "n")
	var p *int32
	roundTrip(t, p, nil)
	x := int32(3)
	roundTrip(t, &x, int32(3))
}

func TestAppendValueUnsupported(t *testing.T) {
	for _, v := range []any{struct{}{}, make(chan int), []complex64{1}, Described{Descriptor: 1.5}} {
		b, err := AppendValue([]byte{1}, v)
		if !errors.Is(err, ErrEncode) {
			t.Errorf("AppendValue(%T) error = %v, want ErrEncode", v, err)
		}
		if !bytes.Equal(b, []byte{1}) {
			t.Errorf("AppendValue(%T) left % x, want the input unchanged", v, b)
		}
	}
	_, err := AppendValue(nil, Array{Code: codeUint, Elements: []any{"x"}})
	if !errors.Is(err, ErrEncode) {
		t.Fatalf("mismatched array element: %v", err)
	}
}

func TestDecodeAlternateEncodings(t *testing.T) {
	cases := []struct {
		in   []byte
		want any
	}{
		{[]byte{0x56, 1}, true},
		{[]byte{0x56, 0}, false},
		{[]byte{0x53, 5}, uint64(5)},
		{[]byte{0x44}, uint64(0)},
		{[]byte{0x52, 5}, uint32(5)},
		{[]byte{0x54, 0xff}, int32(-1)},
		{[]byte{0x55, 0xfe}, int64(-2)},
		{[]byte{0xb1, 0, 0, 0, 1, 'a'}, "a"},
		{[]byte{0xb3, 0, 0, 0, 1, 'a'}, Symbol("a")},
		{[]byte{0xb0, 0, 0, 0, 1, 9}, []byte{9}},
		{[]byte{0xd0, 0, 0, 0, 5, 0, 0, 0, 1, 0x41}, []any{true}},
		{[]byte{0xd1, 0, 0, 0, 6, 0, 0, 0, 2, 0x43, 0x42}, Map{{uint32(0), false}}},
		{[]byte{0xf0, 0, 0, 0, 6, 0, 0, 0, 1, 0x55, 3}, []int64{3}},
		{[]byte{0xe0, 4, 2, 0x54, 1, 0xff}, []int32{1, -1}},
		{[]byte{0xe0, 4, 2, 0x53, 1, 2}, []uint64{1, 2}},
		{[]byte{0xe0, 2, 3, 0x44}, []uint64{0, 0, 0}},
		{[]byte{0xe0, 2, 2, 0x41}, []bool{true, true}},
		{[]byte{0xe0, 2, 2, 0x40}, Array{Code: 0x40, Elements: []any{nil, nil}}},
		{[]byte{0xe0, 4, 1, 0xa3, 1, 'x'}, []Symbol{"x"}},
		{[]byte{0x00, 0xa3, 1, 'd', 0x40}, Described{Symbol("d"), nil}},
		{[]byte{0x00, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x24, 0x45}, Described{uint64(0x24), []any{}}},
	}
	for _, c := range cases {
		got, n, err := DecodeValue(c.in)
		if err != nil || n != len(c.in) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("DecodeValue(% x) = %#v, %d, %v; want %#v, %d", c.in, got, n, err, c.want, len(c.in))
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	cases := []struct {
		name   string
		in     []byte
		offset int
		msg    string
	}{
		{"empty", nil, 0, "unexpected end"},
		{"unknown constructor", []byte{0x01}, 0, "unknown constructor 0x01"},
		{"short uint", []byte{0x70, 1, 2}, 1, "need 4 bytes"},
		{"short str8", []byte{0xa1, 5, 'a'}, 2, "need 5 bytes"},
		{"str32 huge", []byte{0xb1, 0xff, 0xff, 0xff, 0xff}, 5, "need 4294967295 bytes"},
		{"bad bool", []byte{0x56, 2}, 1, "boolean byte 0x02"},
		{"list8 count beyond bytes", []byte{0xc0, 2, 255, 0x40}, 3, "list of 255 elements in 1 bytes"},
		{"list8 size beyond input", []byte{0xc0, 10, 1, 0x40}, 3, "need 9 bytes"},
		{"list size below count field", []byte{0xc0, 0, 0}, 3, "smaller than its count field"},
		{"list32 claims 4G", []byte{0xd0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 9, "need 4294967291 bytes"},
		{"list leftover", []byte{0xc0, 3, 1, 0x40, 0x40}, 4, "list: 1 bytes left over"},
		{"list element overruns", []byte{0xc0, 2, 1, 0x70, 0, 0, 0, 0}, 4, "need 4 bytes, 0 left"},
		{"map odd count", []byte{0xc1, 2, 1, 0x40}, 3, "odd element count"},
		{"map count beyond bytes", []byte{0xc1, 3, 200, 0x40, 0x40}, 3, "map of 200 elements"},
		{"array count beyond bytes", []byte{0xe0, 3, 200, 0x81, 0}, 4, "array of 200 elements of constructor 0x81 in 1 bytes"},
		{"array of empty elements beyond input", []byte{0xe0, 2, 200, 0x40}, 4, "array of 200 empty elements"},
		{"array bad element", []byte{0xe0, 2, 1, 0x01}, 3, "unknown array element constructor 0x01"},
		{"array described described", []byte{0xe0, 5, 1, 0x00, 0x53, 1, 0x00}, 6, "described element constructor"},
		{"descriptor not ulong", []byte{0x00, 0xa1, 1, 'x', 0x40}, 1, "descriptor with constructor 0xa1"},
		{"described no value", []byte{0x00, 0x53, 0x24}, 3, "unexpected end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := DecodeValue(c.in)
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, ErrDecode) {
				t.Fatalf("error = %v, want a *DecodeError", err)
			}
			if de.Offset != c.offset || !strings.Contains(de.Msg, c.msg) {
				t.Fatalf("error = %q at %d, want %q at %d", de.Msg, de.Offset, c.msg, c.offset)
			}
		})
	}
}

func TestDecodeDepthLimit(t *testing.T) {
	// 70 nested list8s, each holding the next; the innermost holds null.
	b := []byte{0x40}
	for i := 0; i < 70; i++ {
		b = append([]byte{0xc0, byte(len(b) + 1), 1}, b...)
	}
	_, _, err := DecodeValue(b)
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 64") {
		t.Fatalf("error = %v, want the depth limit", err)
	}
}

func TestDecodeAllocationBoundedByInput(t *testing.T) {
	// A list32 header claiming 2^32-1 elements in 4 bytes fails before
	// allocating; so does an array.
	in := []byte{0xd0, 0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0x40, 0x40, 0x40, 0x40}
	// A handful of small allocations (the error value; more under the race
	// detector) is fine; one per claimed element is not.
	allocs := testing.AllocsPerRun(10, func() { _, _, _ = DecodeValue(in) })
	if allocs > 8 {
		t.Fatalf("decoding a lying list header allocated %v times", allocs)
	}
	_, _, err := DecodeValue(in)
	if !errors.Is(err, ErrDecode) {
		t.Fatalf("error = %v", err)
	}
}

func TestMapGetLookup(t *testing.T) {
	m := Map{{Symbol("a"), 1}, {"b", 2}, {uint64(3), 3}, {[]byte("x"), 4}}
	if v, ok := m.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %v %v", v, ok)
	}
	if v, ok := m.Get("b"); !ok || v != 2 {
		t.Fatalf("Get(b) = %v %v", v, ok)
	}
	if _, ok := m.Get("c"); ok {
		t.Fatal("Get(c) found a value")
	}
	if v, ok := m.Lookup(uint64(3)); !ok || v != 3 {
		t.Fatalf("Lookup(3) = %v %v", v, ok)
	}
	if _, ok := m.Lookup(uint32(3)); ok {
		t.Fatal("Lookup matched a key of another type")
	}
	if _, ok := m.Lookup([]byte("x")); ok {
		t.Fatal("Lookup matched an uncomparable key")
	}
}

func TestUUIDAndCharString(t *testing.T) {
	u := UUID(uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8"))
	if got := u.String(); got != "6ba7b810-9dad-11d1-80b4-00c04fd430c8" {
		t.Fatalf("UUID.String() = %s", got)
	}
	if got := Char(0x110000).String(); got != "\uFFFD" {
		t.Fatalf("invalid Char.String() = %q", got)
	}
}
