package wire

import (
	"encoding/binary"
	"math"
	"time"
)

// The Append functions write one AMQP value to the end of b and return the
// extended slice, in the manner of strconv.AppendInt: they allocate only
// when b must grow. Integers take their smallest encoding.

// AppendNull appends an AMQP null.
func AppendNull(b []byte) []byte { return append(b, codeNull) }

// AppendBool appends a boolean with the one-byte true/false constructors.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, codeTrue)
	}
	return append(b, codeFalse)
}

// AppendUbyte appends a ubyte.
func AppendUbyte(b []byte, v uint8) []byte { return append(b, codeUbyte, v) }

// AppendUshort appends a ushort.
func AppendUshort(b []byte, v uint16) []byte {
	return binary.BigEndian.AppendUint16(append(b, codeUshort), v)
}

// AppendUint appends a uint as uint0, smalluint or uint.
func AppendUint(b []byte, v uint32) []byte {
	switch {
	case v == 0:
		return append(b, codeUint0)
	case v < 256:
		return append(b, codeSmallUint, byte(v))
	}
	return binary.BigEndian.AppendUint32(append(b, codeUint), v)
}

// AppendUlong appends a ulong as ulong0, smallulong or ulong.
func AppendUlong(b []byte, v uint64) []byte {
	switch {
	case v == 0:
		return append(b, codeUlong0)
	case v < 256:
		return append(b, codeSmallUlong, byte(v))
	}
	return binary.BigEndian.AppendUint64(append(b, codeUlong), v)
}

// AppendByte appends a (signed) byte.
func AppendByte(b []byte, v int8) []byte { return append(b, codeByte, byte(v)) }

// AppendShort appends a short.
func AppendShort(b []byte, v int16) []byte {
	return binary.BigEndian.AppendUint16(append(b, codeShort), uint16(v))
}

// AppendInt appends an int as smallint or int.
func AppendInt(b []byte, v int32) []byte {
	if v >= math.MinInt8 && v <= math.MaxInt8 {
		return append(b, codeSmallInt, byte(int8(v)))
	}
	return binary.BigEndian.AppendUint32(append(b, codeInt), uint32(v))
}

// AppendLong appends a long as smalllong or long.
func AppendLong(b []byte, v int64) []byte {
	if v >= math.MinInt8 && v <= math.MaxInt8 {
		return append(b, codeSmallLong, byte(int8(v)))
	}
	return binary.BigEndian.AppendUint64(append(b, codeLong), uint64(v))
}

// AppendFloat appends a float (IEEE 754 binary32).
func AppendFloat(b []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(append(b, codeFloat), math.Float32bits(v))
}

// AppendDouble appends a double (IEEE 754 binary64).
func AppendDouble(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, codeDouble), math.Float64bits(v))
}

// AppendChar appends a char (UTF-32BE).
func AppendChar(b []byte, v Char) []byte {
	return binary.BigEndian.AppendUint32(append(b, codeChar), uint32(v))
}

// AppendTimestamp appends a timestamp: milliseconds since the Unix epoch.
func AppendTimestamp(b []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(append(b, codeTimestamp), uint64(t.UnixMilli()))
}

// AppendUUID appends a uuid.
func AppendUUID(b []byte, u UUID) []byte { return append(append(b, codeUUID), u[:]...) }

// AppendBinary appends a binary as vbin8 or vbin32.
func AppendBinary(b []byte, v []byte) []byte {
	if len(v) < 256 {
		b = append(b, codeVbin8, byte(len(v)))
	} else {
		b = binary.BigEndian.AppendUint32(append(b, codeVbin32), uint32(len(v)))
	}
	return append(b, v...)
}

// AppendString appends a string as str8-utf8 or str32-utf8. The caller
// supplies valid UTF-8.
func AppendString(b []byte, s string) []byte {
	if len(s) < 256 {
		b = append(b, codeStr8, byte(len(s)))
	} else {
		b = binary.BigEndian.AppendUint32(append(b, codeStr32), uint32(len(s)))
	}
	return append(b, s...)
}

// AppendSymbol appends a symbol as sym8 or sym32.
func AppendSymbol(b []byte, s Symbol) []byte {
	if len(s) < 256 {
		b = append(b, codeSym8, byte(len(s)))
	} else {
		b = binary.BigEndian.AppendUint32(append(b, codeSym32), uint32(len(s)))
	}
	return append(b, s...)
}

// AppendDescriptor appends the constructor of a described type with a
// numeric descriptor: 0x00 followed by the descriptor as a ulong. The
// described value follows.
func AppendDescriptor(b []byte, code uint64) []byte {
	return AppendUlong(append(b, codeDescribed), code)
}

// AppendDecimal32 appends a decimal32.
func AppendDecimal32(b []byte, v Decimal32) []byte { return append(append(b, codeDecimal32), v[:]...) }

// AppendDecimal64 appends a decimal64.
func AppendDecimal64(b []byte, v Decimal64) []byte { return append(append(b, codeDecimal64), v[:]...) }

// AppendDecimal128 appends a decimal128.
func AppendDecimal128(b []byte, v Decimal128) []byte {
	return append(append(b, codeDecimal128), v[:]...)
}

// beginCompound reserves a 32-bit header (constructor, size, count) for a
// list, map or array and returns the offset of the constructor.
func beginCompound(b []byte, code32 byte) ([]byte, int) {
	start := len(b)
	return append(b, code32, 0, 0, 0, 0, 0, 0, 0, 0), start
}

// endCompound completes a compound begun at start with count elements:
// the 8-bit form (code8) when size and count fit in a byte, the 32-bit form
// otherwise. The 8-bit form moves the body down by six bytes in place.
func endCompound(b []byte, start, count int, code8, code32 byte) []byte {
	body := len(b) - (start + 9)
	if body+1 <= math.MaxUint8 && count <= math.MaxUint8 {
		b[start] = code8
		b[start+1] = byte(body + 1)
		b[start+2] = byte(count)
		copy(b[start+3:], b[start+9:])
		return b[:len(b)-6]
	}
	b[start] = code32
	binary.BigEndian.PutUint32(b[start+1:], uint32(body+4))
	binary.BigEndian.PutUint32(b[start+5:], uint32(count))
	return b
}

// endList completes a list; an empty list becomes list0.
func endList(b []byte, start, count int) []byte {
	if count == 0 {
		return append(b[:start], codeList0)
	}
	return endCompound(b, start, count, codeList8, codeList32)
}

// AppendList appends a list of values.
func AppendList(b []byte, items []any) ([]byte, error) {
	b, start := beginCompound(b, codeList32)
	for _, v := range items {
		var err error
		if b, err = AppendValue(b, v); err != nil {
			return b[:start], err
		}
	}
	return endList(b, start, len(items)), nil
}

// AppendMap appends a map in the entries' order.
func AppendMap(b []byte, m Map) ([]byte, error) {
	b, start := beginCompound(b, codeMap32)
	for _, kv := range m {
		var err error
		if b, err = AppendValue(b, kv.Key); err != nil {
			return b[:start], err
		}
		if b, err = AppendValue(b, kv.Value); err != nil {
			return b[:start], err
		}
	}
	return endCompound(b, start, 2*len(m), codeMap8, codeMap32), nil
}
