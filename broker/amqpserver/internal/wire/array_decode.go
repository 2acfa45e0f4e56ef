package wire

import (
	"math"
	"time"
)

// readArrayBody reads an array after its constructor: a typed slice for the
// common element types, an Array otherwise.
func (d *Decoder) readArrayBody(code byte) (any, error) {
	count, end, err := d.readCompoundHeader(code)
	if err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	outer := d.bound(end)
	v, err := d.readArrayElements(count)
	if err := d.unbound(outer, end, "array", err); err != nil {
		return nil, err
	}
	return v, nil
}

// readArrayElements reads the element constructor and count elements.
func (d *Decoder) readArrayElements(count int) (any, error) {
	elem, err := d.readCode()
	if err != nil {
		return nil, err
	}
	var desc any
	if elem == codeDescribed {
		if desc, err = d.readDescriptorValue(); err != nil {
			return nil, err
		}
		if elem, err = d.readCode(); err != nil {
			return nil, err
		}
		if elem == codeDescribed {
			d.off--
			return nil, d.errorf("array of described values with a described element constructor")
		}
	}
	if fixedWidth(elem) < 0 && !isVariable(elem) {
		d.off--
		return nil, d.errorf("unknown array element constructor 0x%02x", elem)
	}
	// Never trust count beyond what the bytes can hold.
	left := len(d.buf) - d.off
	if w := minWidth(elem); w > 0 {
		if count > left/w {
			return nil, d.errorf("array of %d elements of constructor 0x%02x in %d bytes", count, elem, left)
		}
	} else if count > len(d.buf) {
		// Zero-width elements: bound by the whole input's size.
		return nil, d.errorf("array of %d empty elements in a %d-byte input", count, len(d.buf))
	}
	if desc == nil {
		if v, ok, err := d.readTypedArray(elem, count); ok || err != nil {
			return v, err
		}
	}
	a := Array{Descriptor: desc, Code: elem, Elements: make([]any, count)}
	for i := range a.Elements {
		v, err := d.readBody(elem)
		if err != nil {
			return nil, err
		}
		a.Elements[i] = v
	}
	return a, nil
}

// isVariable reports whether code is a variable-width or compound encoding.
func isVariable(code byte) bool {
	switch code {
	case codeVbin8, codeVbin32, codeStr8, codeStr32, codeSym8, codeSym32,
		codeList8, codeList32, codeMap8, codeMap32, codeArray8, codeArray32:
		return true
	}
	return false
}

// readTypedArray reads arrays of the element types that have a typed slice
// in the value model; ok is false for the others. Fixed-width bounds were
// checked by the caller.
func (d *Decoder) readTypedArray(elem byte, count int) (v any, ok bool, err error) {
	switch elem {
	case codeSym8, codeSym32:
		s := make([]Symbol, count)
		for i := range s {
			x, err := d.readStringBody(elem)
			if err != nil {
				return nil, true, err
			}
			s[i] = Symbol(x)
		}
		return s, true, nil
	case codeStr8, codeStr32:
		s := make([]string, count)
		for i := range s {
			if s[i], err = d.readStringBody(elem); err != nil {
				return nil, true, err
			}
		}
		return s, true, nil
	case codeVbin8, codeVbin32:
		s := make([][]byte, count)
		for i := range s {
			if s[i], err = d.readBinaryBody(elem); err != nil {
				return nil, true, err
			}
		}
		return s, true, nil
	case codeUUID:
		s := make([]UUID, count)
		for i := range s {
			d.off += copy(s[i][:], d.buf[d.off:])
		}
		return s, true, nil
	case codeLong, codeSmallLong:
		s := make([]int64, count)
		for i := range s {
			if elem == codeLong {
				s[i] = int64(d.u64())
			} else {
				s[i] = int64(int8(d.u8()))
			}
		}
		return s, true, nil
	case codeInt, codeSmallInt:
		s := make([]int32, count)
		for i := range s {
			if elem == codeInt {
				s[i] = int32(d.u32())
			} else {
				s[i] = int32(int8(d.u8()))
			}
		}
		return s, true, nil
	case codeShort:
		s := make([]int16, count)
		for i := range s {
			s[i] = int16(d.u16())
		}
		return s, true, nil
	case codeByte:
		s := make([]int8, count)
		for i := range s {
			s[i] = int8(d.u8())
		}
		return s, true, nil
	case codeUlong, codeSmallUlong, codeUlong0:
		s := make([]uint64, count)
		for i := range s {
			if s[i], err = d.readUlongBody(elem); err != nil {
				return nil, true, err
			}
		}
		return s, true, nil
	case codeUint, codeSmallUint, codeUint0:
		s := make([]uint32, count)
		for i := range s {
			switch elem {
			case codeUint:
				s[i] = d.u32()
			case codeSmallUint:
				s[i] = uint32(d.u8())
			}
		}
		return s, true, nil
	case codeUshort:
		s := make([]uint16, count)
		for i := range s {
			s[i] = d.u16()
		}
		return s, true, nil
	case codeBool, codeTrue, codeFalse:
		s := make([]bool, count)
		for i := range s {
			switch elem {
			case codeBool:
				if s[i], err = d.readBoolByte(); err != nil {
					return nil, true, err
				}
			case codeTrue:
				s[i] = true
			}
		}
		return s, true, nil
	case codeFloat:
		s := make([]float32, count)
		for i := range s {
			s[i] = math.Float32frombits(d.u32())
		}
		return s, true, nil
	case codeDouble:
		s := make([]float64, count)
		for i := range s {
			s[i] = math.Float64frombits(d.u64())
		}
		return s, true, nil
	case codeTimestamp:
		s := make([]time.Time, count)
		for i := range s {
			s[i] = time.UnixMilli(int64(d.u64())).UTC()
		}
		return s, true, nil
	case codeMap8, codeMap32:
		s := make([]Map, count)
		for i := range s {
			if s[i], err = d.readMapBody(elem); err != nil {
				return nil, true, err
			}
		}
		return s, true, nil
	}
	return nil, false, nil
}
