package wire

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTypedReaders(t *testing.T) {
	longs := map[string]int64{"\x51\xff": -1, "\x54\x80": -128, "\x55\x7f": 127, "\x61\x80\x00": math.MinInt16,
		"\x71\x7f\xff\xff\xff": math.MaxInt32, "\x81\x80\x00\x00\x00\x00\x00\x00\x00": math.MinInt64}
	for in, want := range longs {
		got, err := NewDecoder([]byte(in)).ReadLong()
		if err != nil || got != want {
			t.Errorf("ReadLong(% x) = %d, %v; want %d", in, got, err, want)
		}
	}
	ulongs := map[string]uint64{"\x43": 0, "\x44": 0, "\x50\x09": 9, "\x52\x08": 8, "\x53\x07": 7, "\x60\x01\x00": 256,
		"\x70\x00\x01\x00\x00": 65536, "\x80\xff\xff\xff\xff\xff\xff\xff\xff": math.MaxUint64}
	for in, want := range ulongs {
		got, err := NewDecoder([]byte(in)).ReadUlong()
		if err != nil || got != want {
			t.Errorf("ReadUlong(% x) = %d, %v; want %d", in, got, err, want)
		}
	}
	bools := map[string]bool{"\x41": true, "\x42": false, "\x56\x01": true, "\x56\x00": false}
	for in, want := range bools {
		got, err := NewDecoder([]byte(in)).ReadBool()
		if err != nil || got != want {
			t.Errorf("ReadBool(% x) = %v, %v", in, got, err)
		}
	}
	d := NewDecoder([]byte("\x71\x00\x00\x00\x05\xa1\x01x\x40"))
	if v, err := d.ReadInt(); err != nil || v != 5 || d.Offset() != 5 {
		t.Fatalf("ReadInt = %d, %v at %d", v, err, d.Offset())
	}
	if d.PeekNull() || d.Len() != 4 {
		t.Fatal("PeekNull consumed a string")
	}
	if s, err := d.ReadString(); err != nil || s != "x" || !d.PeekNull() || d.Len() != 0 {
		t.Fatalf("ReadString = %q, %v", s, err)
	}

	errs := []struct {
		in   string
		read func(*Decoder) error
		msg  string
	}{
		{"\x81\x00\x00\x00\x01\x00\x00\x00\x00", func(d *Decoder) error { _, err := d.ReadInt(); return err }, "int value 4294967296 out of range"},
		{"\x80\x00\x00\x00\x01\x00\x00\x00\x00", func(d *Decoder) error { _, err := d.ReadUint(); return err }, "uint value 4294967296 out of range"},
		{"\x70\x00\x01\x00\x00", func(d *Decoder) error { _, err := d.ReadUshort(); return err }, "ushort value 65536 out of range"},
		{"\x60\x01\x00", func(d *Decoder) error { _, err := d.ReadUbyte(); return err }, "ubyte value 256 out of range"},
		{"\x70\x00\x00\x00\x01", func(d *Decoder) error { _, err := d.ReadLong(); return err }, "where a signed integer was expected"},
		{"\x55\x01", func(d *Decoder) error { _, err := d.ReadUlong(); return err }, "where an unsigned integer was expected"},
		{"\x43", func(d *Decoder) error { _, err := d.ReadBool(); return err }, "where boolean was expected"},
		{"\xa0\x00", func(d *Decoder) error { _, err := d.ReadString(); return err }, "where a string was expected"},
		{"\xa1\x00", func(d *Decoder) error { _, err := d.ReadBinary(); return err }, "where a binary was expected"},
		{"\x81\x00\x00\x00\x00\x00\x00\x00\x00", func(d *Decoder) error { _, err := d.ReadTimestamp(); return err }, "where a timestamp was expected"},
		{"\x98\x00", func(d *Decoder) error { _, err := d.ReadUUID(); return err }, "need 16 bytes"},
		{"\xa1\x00", func(d *Decoder) error { _, err := d.ReadUUID(); return err }, "where a uuid was expected"},
		{"\xe0\x04\x01\xa1\x01x", func(d *Decoder) error { _, err := d.ReadSymbols(); return err }, "array of []string where symbols were expected"},
		{"\x40", func(d *Decoder) error { _, err := d.ReadSymbols(); return err }, "where a symbol or an array of symbols was expected"},
		{"\x45", func(d *Decoder) error { _, err := d.ReadMap(); return err }, "where a map was expected"},
		{"\xc1\x01\x00", func(d *Decoder) error { _, err := d.ReadList(); return err }, "where a list was expected"},
		{"\x70\x00", func(d *Decoder) error { _, err := d.ReadUlong(); return err }, "need 4 bytes"},
		{"\x81\x00", func(d *Decoder) error { _, err := d.ReadLong(); return err }, "need 8 bytes"},
		{"\x56", func(d *Decoder) error { _, err := d.ReadBool(); return err }, "need 1 bytes"},
	}
	for _, c := range errs {
		err := c.read(NewDecoder([]byte(c.in)))
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(de.Msg, c.msg) {
			t.Errorf("reading % x: error %v, want %q", c.in, err, c.msg)
		}
	}
	// A failed typed read leaves the offset at the value.
	d = NewDecoder([]byte("\xa1\x01x"))
	if _, err := d.ReadLong(); err == nil || d.Offset() != 0 {
		t.Fatalf("offset after a failed read: %d", d.Offset())
	}
}

func TestSkip(t *testing.T) {
	values := []any{nil, true, uint8(1), uint16(2), uint32(3), uint64(1 << 50), int8(-1), int16(-2), int32(1 << 20),
		int64(-1 << 40), float32(1), 2.0, Decimal32{}, Decimal64{}, Decimal128{}, Char('c'), time.Unix(1, 0), UUID{},
		[]byte("bin"), strings.Repeat("s", 300), Symbol("sym"), []any{"a", []any{}}, Map{{"k", Map{}}},
		[]int64{1, 2}, Described{uint64(5), []any{int64(1)}}, Described{Symbol("x"), Described{uint64(1), nil}}}
	var b []byte
	var ends []int
	for _, v := range values {
		b = mustAppendTo(t, b, v)
		ends = append(ends, len(b))
	}
	d := NewDecoder(b)
	for i, end := range ends {
		if err := d.Skip(); err != nil || d.Offset() != end {
			t.Fatalf("Skip of %T: offset %d, %v; want %d", values[i], d.Offset(), err, end)
		}
	}
	for _, in := range []string{"", "\x01", "\x70\x00", "\xa1\x05ab", "\xc0\x05\x01", "\x00\x53", "\x00\xa1\x00\x40"} {
		d := NewDecoder([]byte(in))
		if err := d.Skip(); !errors.Is(err, ErrDecode) {
			t.Errorf("Skip(% x) error = %v", in, err)
		}
	}
}

func mustAppendTo(t *testing.T, b []byte, v any) []byte {
	t.Helper()
	b, err := AppendValue(b, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestArrayElementEncodings(t *testing.T) {
	ts := time.UnixMilli(5).UTC()
	cases := []struct {
		a    Array
		want any
	}{
		{Array{Code: codeBool, Elements: []any{true, false}}, []bool{true, false}},
		{Array{Code: codeTrue, Elements: []any{true}}, []bool{true}},
		{Array{Code: codeFalse, Elements: []any{false}}, []bool{false}},
		{Array{Code: codeUint0, Elements: []any{uint32(0)}}, []uint32{0}},
		{Array{Code: codeUlong0, Elements: []any{uint64(0)}}, []uint64{0}},
		{Array{Code: codeSmallUint, Elements: []any{uint32(7)}}, []uint32{7}},
		{Array{Code: codeSmallUlong, Elements: []any{uint64(7)}}, []uint64{7}},
		{Array{Code: codeUshort, Elements: []any{uint16(7)}}, []uint16{7}},
		{Array{Code: codeUint, Elements: []any{uint32(7)}}, []uint32{7}},
		{Array{Code: codeUlong, Elements: []any{uint64(7)}}, []uint64{7}},
		{Array{Code: codeByte, Elements: []any{int8(-7)}}, []int8{-7}},
		{Array{Code: codeSmallInt, Elements: []any{int32(-7)}}, []int32{-7}},
		{Array{Code: codeSmallLong, Elements: []any{int64(-7)}}, []int64{-7}},
		{Array{Code: codeShort, Elements: []any{int16(-7)}}, []int16{-7}},
		{Array{Code: codeInt, Elements: []any{int32(-7)}}, []int32{-7}},
		{Array{Code: codeLong, Elements: []any{int64(-7)}}, []int64{-7}},
		{Array{Code: codeFloat, Elements: []any{float32(1)}}, []float32{1}},
		{Array{Code: codeDouble, Elements: []any{2.0}}, []float64{2}},
		{Array{Code: codeDecimal32, Elements: []any{Decimal32{1}}}, Array{Code: codeDecimal32, Elements: []any{Decimal32{1}}}},
		{Array{Code: codeDecimal128, Elements: []any{Decimal128{1}}}, Array{Code: codeDecimal128, Elements: []any{Decimal128{1}}}},
		{Array{Code: codeTimestamp, Elements: []any{ts}}, []time.Time{ts}},
		{Array{Code: codeUUID, Elements: []any{UUID{1}}}, []UUID{{1}}},
		{Array{Code: codeVbin8, Elements: []any{[]byte{1}}}, [][]byte{{1}}},
		{Array{Code: codeVbin32, Elements: []any{[]byte{1}}}, [][]byte{{1}}},
		{Array{Code: codeStr32, Elements: []any{"s"}}, []string{"s"}},
		{Array{Code: codeSym32, Elements: []any{Symbol("s")}}, []Symbol{"s"}},
		{Array{Code: codeMap8, Elements: []any{Map{{"k", nil}}}}, []Map{{{"k", nil}}}},
		{Array{Code: codeList0, Elements: []any{[]any{}}}, Array{Code: codeList0, Elements: []any{[]any{}}}},
		{Array{Code: codeArray32, Elements: []any{[]int64{1}}}, Array{Code: codeArray32, Elements: []any{[]int64{1}}}},
	}
	for _, c := range cases {
		b, err := AppendValue(nil, c.a)
		if err != nil {
			t.Fatalf("Array code 0x%02x: %v", c.a.Code, err)
		}
		got, _, err := DecodeValue(b)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Array code 0x%02x decodes as %#v, %v; want %#v", c.a.Code, got, err, c.want)
		}
	}
	bad := []Array{
		{Code: codeNull, Elements: []any{1}},
		{Code: codeTrue, Elements: []any{false}},
		{Code: codeUint0, Elements: []any{uint32(1)}},
		{Code: codeList0, Elements: []any{[]any{1}}},
		{Code: codeBool, Elements: []any{1}},
		{Code: codeUbyte, Elements: []any{uint16(256)}},
		{Code: codeUshort, Elements: []any{int16(1)}},
		{Code: codeByte, Elements: []any{int64(200)}},
		{Code: codeShort, Elements: []any{int64(1 << 20)}},
		{Code: codeInt, Elements: []any{int64(1 << 40)}},
		{Code: codeLong, Elements: []any{uint64(1)}},
		{Code: codeFloat, Elements: []any{1.0}},
		{Code: codeDouble, Elements: []any{float32(1)}},
		{Code: codeDecimal64, Elements: []any{Decimal32{}}},
		{Code: codeChar, Elements: []any{'c'}},
		{Code: codeTimestamp, Elements: []any{int64(1)}},
		{Code: codeUUID, Elements: []any{[16]byte{}}},
		{Code: codeStr8, Elements: []any{Symbol("x")}},
		{Code: codeSym8, Elements: []any{"x"}},
		{Code: codeVbin8, Elements: []any{"x"}},
		{Code: codeStr8, Elements: []any{strings.Repeat("x", 256)}},
		{Code: codeList8, Elements: []any{Map{}}},
		{Code: codeMap8, Elements: []any{[]any{}}},
		{Code: codeArray8, Elements: []any{"x"}},
		{Code: codeList8, Elements: []any{[]any{strings.Repeat("x", 300)}}},
		{Code: 0x01, Elements: []any{nil}},
		{Descriptor: 1.5, Code: codeNull},
	}
	for _, a := range bad {
		if _, err := AppendValue(nil, a); !errors.Is(err, ErrEncode) {
			t.Errorf("Array %#v: error %v, want ErrEncode", a, err)
		}
	}
}

func TestAppendReflectKinds(t *testing.T) {
	type (
		b8  bool
		i8  int8
		i16 int16
		i32 int32
		i64 int
		u8  uint8
		u16 uint16
		u32 uint32
		u64 uint
		f32 float32
		f64 float64
		bs  []byte
		id  [16]byte
	)
	cases := map[any]any{b8(true): true, i8(-1): int8(-1), i16(-1): int16(-1), i32(-1): int32(-1), i64(-1): int64(-1),
		u8(1): uint8(1), u16(1): uint16(1), u32(1): uint32(1), u64(1): uint64(1), f32(1): float32(1), f64(1): 1.0,
		id{1}: UUID{1}}
	for in, want := range cases {
		roundTrip(t, in, want)
	}
	roundTrip(t, bs{1}, []byte{1})
	if _, err := AppendValue(nil, [15]byte{}); !errors.Is(err, ErrEncode) {
		t.Fatalf("[15]byte: %v", err)
	}
}
