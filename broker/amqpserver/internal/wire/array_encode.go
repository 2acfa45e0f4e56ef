package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// endArray completes an array begun with beginCompound: count elements
// after the element constructor.
func endArray(b []byte, start, count int) []byte {
	return endCompound(b, start, count, codeArray8, codeArray32)
}

// AppendSymbolArray appends an array of symbols (the encoding of the
// "multiple" symbol fields such as capabilities).
func AppendSymbolArray(b []byte, v []Symbol) []byte {
	b, _ = appendTypedArray(b, v)
	return b
}

// appendTypedArray appends an array from one of the typed slices of the
// value model. Fixed-width element types use their full-width constructor;
// variable-width ones use the 8-bit length form when every element fits.
func appendTypedArray(b []byte, v any) ([]byte, error) {
	b, start := beginCompound(b, codeArray32)
	var n int
	switch v := v.(type) {
	case []Symbol:
		n = len(v)
		b = appendVarArray(b, v, codeSym8, codeSym32)
	case []string:
		n = len(v)
		b = appendVarArray(b, v, codeStr8, codeStr32)
	case [][]byte:
		n = len(v)
		b = appendVarArray(b, v, codeVbin8, codeVbin32)
	case []UUID:
		n = len(v)
		b = append(b, codeUUID)
		for _, u := range v {
			b = append(b, u[:]...)
		}
	case []int64:
		n = len(v)
		b = append(b, codeLong)
		for _, x := range v {
			b = binary.BigEndian.AppendUint64(b, uint64(x))
		}
	case []int32:
		n = len(v)
		b = append(b, codeInt)
		for _, x := range v {
			b = binary.BigEndian.AppendUint32(b, uint32(x))
		}
	case []int16:
		n = len(v)
		b = append(b, codeShort)
		for _, x := range v {
			b = binary.BigEndian.AppendUint16(b, uint16(x))
		}
	case []int8:
		n = len(v)
		b = append(b, codeByte)
		for _, x := range v {
			b = append(b, byte(x))
		}
	case []uint64:
		n = len(v)
		b = append(b, codeUlong)
		for _, x := range v {
			b = binary.BigEndian.AppendUint64(b, x)
		}
	case []uint32:
		n = len(v)
		b = append(b, codeUint)
		for _, x := range v {
			b = binary.BigEndian.AppendUint32(b, x)
		}
	case []uint16:
		n = len(v)
		b = append(b, codeUshort)
		for _, x := range v {
			b = binary.BigEndian.AppendUint16(b, x)
		}
	case []bool:
		n = len(v)
		b = append(b, codeBool)
		for _, x := range v {
			if x {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	case []float32:
		n = len(v)
		b = append(b, codeFloat)
		for _, x := range v {
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(x))
		}
	case []float64:
		n = len(v)
		b = append(b, codeDouble)
		for _, x := range v {
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(x))
		}
	case []time.Time:
		n = len(v)
		b = append(b, codeTimestamp)
		for _, t := range v {
			b = binary.BigEndian.AppendUint64(b, uint64(t.UnixMilli()))
		}
	case []Map:
		n = len(v)
		b = append(b, codeMap32)
		for _, m := range v {
			var err error
			if b, err = appendElement(b, codeMap32, m); err != nil {
				return b[:start], err
			}
		}
	default:
		return b[:start], &EncodeError{Msg: fmt.Sprintf("no AMQP array encoding for Go type %T", v)}
	}
	return endArray(b, start, n), nil
}

// appendVarArray writes the constructor and elements of an array of
// variable-width values (symbols, strings, binaries).
func appendVarArray[T ~string | ~[]byte](b []byte, v []T, code8, code32 byte) []byte {
	short := true
	for _, x := range v {
		if len(x) > math.MaxUint8 {
			short = false
			break
		}
	}
	if short {
		b = append(b, code8)
		for _, x := range v {
			b = append(append(b, byte(len(x))), x...)
		}
		return b
	}
	b = append(b, code32)
	for _, x := range v {
		b = append(binary.BigEndian.AppendUint32(b, uint32(len(x))), x...)
	}
	return b
}

// appendArray appends a generic Array: every element is written in the
// encoding Code names, after the shared descriptor if there is one.
func appendArray(b []byte, a Array) ([]byte, error) {
	b, start := beginCompound(b, codeArray32)
	if a.Descriptor != nil {
		b = append(b, codeDescribed)
		var err error
		switch d := a.Descriptor.(type) {
		case uint64:
			b = AppendUlong(b, d)
		case Symbol:
			b = AppendSymbol(b, d)
		default:
			err = &EncodeError{Msg: fmt.Sprintf("array descriptor of type %T: want uint64 or Symbol", a.Descriptor)}
		}
		if err != nil {
			return b[:start], err
		}
	}
	b = append(b, a.Code)
	for _, e := range a.Elements {
		var err error
		if b, err = appendElement(b, a.Code, e); err != nil {
			return b[:start], err
		}
	}
	return endArray(b, start, len(a.Elements)), nil
}

// appendElement writes one array element's bytes (no constructor) in the
// encoding code.
func appendElement(b []byte, code byte, v any) ([]byte, error) {
	mismatch := func() ([]byte, error) {
		return b, &EncodeError{Msg: fmt.Sprintf("array element of type %T does not fit constructor 0x%02x", v, code)}
	}
	switch code {
	case codeNull:
		if v != nil {
			return mismatch()
		}
		return b, nil
	case codeTrue, codeFalse:
		if x, ok := v.(bool); !ok || x != (code == codeTrue) {
			return mismatch()
		}
		return b, nil
	case codeUint0, codeUlong0:
		if u, ok := asUint64(v); !ok || u != 0 {
			return mismatch()
		}
		return b, nil
	case codeList0:
		if l, ok := v.([]any); !ok || len(l) != 0 {
			return mismatch()
		}
		return b, nil
	case codeBool:
		x, ok := v.(bool)
		if !ok {
			return mismatch()
		}
		if x {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case codeUbyte, codeSmallUint, codeSmallUlong:
		u, ok := asUint64(v)
		if !ok || u > math.MaxUint8 {
			return mismatch()
		}
		return append(b, byte(u)), nil
	case codeUshort:
		u, ok := asUint64(v)
		if !ok || u > math.MaxUint16 {
			return mismatch()
		}
		return binary.BigEndian.AppendUint16(b, uint16(u)), nil
	case codeUint:
		u, ok := asUint64(v)
		if !ok || u > math.MaxUint32 {
			return mismatch()
		}
		return binary.BigEndian.AppendUint32(b, uint32(u)), nil
	case codeUlong:
		u, ok := asUint64(v)
		if !ok {
			return mismatch()
		}
		return binary.BigEndian.AppendUint64(b, u), nil
	case codeByte, codeSmallInt, codeSmallLong:
		i, ok := asInt64(v)
		if !ok || i < math.MinInt8 || i > math.MaxInt8 {
			return mismatch()
		}
		return append(b, byte(i)), nil
	case codeShort:
		i, ok := asInt64(v)
		if !ok || i < math.MinInt16 || i > math.MaxInt16 {
			return mismatch()
		}
		return binary.BigEndian.AppendUint16(b, uint16(i)), nil
	case codeInt:
		i, ok := asInt64(v)
		if !ok || i < math.MinInt32 || i > math.MaxInt32 {
			return mismatch()
		}
		return binary.BigEndian.AppendUint32(b, uint32(i)), nil
	case codeLong:
		i, ok := asInt64(v)
		if !ok {
			return mismatch()
		}
		return binary.BigEndian.AppendUint64(b, uint64(i)), nil
	case codeFloat:
		f, ok := v.(float32)
		if !ok {
			return mismatch()
		}
		return binary.BigEndian.AppendUint32(b, math.Float32bits(f)), nil
	case codeDouble:
		f, ok := v.(float64)
		if !ok {
			return mismatch()
		}
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f)), nil
	case codeDecimal32:
		d, ok := v.(Decimal32)
		if !ok {
			return mismatch()
		}
		return append(b, d[:]...), nil
	case codeDecimal64:
		d, ok := v.(Decimal64)
		if !ok {
			return mismatch()
		}
		return append(b, d[:]...), nil
	case codeDecimal128:
		d, ok := v.(Decimal128)
		if !ok {
			return mismatch()
		}
		return append(b, d[:]...), nil
	case codeChar:
		c, ok := v.(Char)
		if !ok {
			return mismatch()
		}
		return binary.BigEndian.AppendUint32(b, uint32(c)), nil
	case codeTimestamp:
		t, ok := v.(time.Time)
		if !ok {
			return mismatch()
		}
		return binary.BigEndian.AppendUint64(b, uint64(t.UnixMilli())), nil
	case codeUUID:
		u, ok := v.(UUID)
		if !ok {
			return mismatch()
		}
		return append(b, u[:]...), nil
	case codeVbin8, codeVbin32, codeStr8, codeStr32, codeSym8, codeSym32:
		var s string
		switch x := v.(type) {
		case []byte:
			if code != codeVbin8 && code != codeVbin32 {
				return mismatch()
			}
			s = string(x)
		case string:
			if code != codeStr8 && code != codeStr32 {
				return mismatch()
			}
			s = x
		case Symbol:
			if code != codeSym8 && code != codeSym32 {
				return mismatch()
			}
			s = string(x)
		default:
			return mismatch()
		}
		if code&0xf0 == 0xa0 {
			if len(s) > math.MaxUint8 {
				return mismatch()
			}
			b = append(b, byte(len(s)))
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		}
		return append(b, s...), nil
	case codeList8, codeList32, codeMap8, codeMap32, codeArray8, codeArray32:
		return appendCompoundElement(b, code, v)
	}
	return mismatch()
}

// appendCompoundElement writes a list, map or array element in exactly the
// width code asks for: it encodes the value, then rewrites the header.
func appendCompoundElement(b []byte, code byte, v any) ([]byte, error) {
	p := len(b)
	var err error
	switch code {
	case codeList8, codeList32:
		l, ok := v.([]any)
		if !ok {
			return b, &EncodeError{Msg: fmt.Sprintf("array element of type %T in a list array", v)}
		}
		b, err = AppendList(b, l)
	case codeMap8, codeMap32:
		m, ok := v.(Map)
		if !ok {
			return b, &EncodeError{Msg: fmt.Sprintf("array element of type %T in a map array", v)}
		}
		b, err = AppendMap(b, m)
	default:
		b, err = AppendValue(b, v)
		if err == nil && b[p] != codeArray8 && b[p] != codeArray32 {
			return b[:p], &EncodeError{Msg: fmt.Sprintf("array element of type %T in an array of arrays", v)}
		}
	}
	if err != nil {
		return b[:p], err
	}
	// Read back the header the encoder chose.
	var count, hdr int
	switch b[p] {
	case codeList0:
		count, hdr = 0, 1
	case codeList8, codeMap8, codeArray8:
		count, hdr = int(b[p+2]), 3
	default:
		count, hdr = int(binary.BigEndian.Uint32(b[p+5:])), 9
	}
	payload := len(b) - p - hdr
	short := code == codeList8 || code == codeMap8 || code == codeArray8
	newHdr := 8
	if short {
		if payload+1 > math.MaxUint8 || count > math.MaxUint8 {
			return b[:p], &EncodeError{Msg: fmt.Sprintf("array element too large for constructor 0x%02x", code)}
		}
		newHdr = 2
	}
	if newHdr > hdr {
		b = append(b, zeros[:newHdr-hdr]...)
	}
	copy(b[p+newHdr:], b[p+hdr:p+hdr+payload])
	b = b[:p+newHdr+payload]
	if short {
		b[p], b[p+1] = byte(payload+1), byte(count)
	} else {
		binary.BigEndian.PutUint32(b[p:], uint32(payload+4))
		binary.BigEndian.PutUint32(b[p+4:], uint32(count))
	}
	return b, nil
}

// zeros pads a buffer that a header rewrite widens.
var zeros [8]byte
