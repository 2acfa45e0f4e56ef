package wire

import (
	"time"
)

// The typed readers read one value that must be of the named AMQP type (in
// any of its encodings). A null, or a value of another type, is an error;
// callers that allow null check PeekNull first. Narrower unsigned types are
// accepted where a wider one is asked for, since a value in range means the
// same.

// wrongType builds the error for a value of an unexpected type; the offset
// is that of the constructor.
func (d *Decoder) wrongType(start int, code byte, want string) error {
	d.off = start
	return d.errorf("constructor 0x%02x where %s was expected", code, want)
}

// ReadBool reads a boolean.
func (d *Decoder) ReadBool() (bool, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return false, err
	}
	switch code {
	case codeTrue:
		return true, nil
	case codeFalse:
		return false, nil
	case codeBool:
		if err := d.need(1); err != nil {
			return false, err
		}
		return d.readBoolByte()
	}
	return false, d.wrongType(start, code, "boolean")
}

// ReadUlong reads an unsigned integer of any width.
func (d *Decoder) ReadUlong() (uint64, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return 0, err
	}
	switch code {
	case codeUlong0, codeUint0:
		return 0, nil
	case codeSmallUlong, codeSmallUint, codeUbyte:
		if err := d.need(1); err != nil {
			return 0, err
		}
		return uint64(d.u8()), nil
	case codeUshort:
		if err := d.need(2); err != nil {
			return 0, err
		}
		return uint64(d.u16()), nil
	case codeUint:
		if err := d.need(4); err != nil {
			return 0, err
		}
		return uint64(d.u32()), nil
	case codeUlong:
		if err := d.need(8); err != nil {
			return 0, err
		}
		return d.u64(), nil
	}
	return 0, d.wrongType(start, code, "an unsigned integer")
}

// readUnsigned reads an unsigned integer no larger than max.
func (d *Decoder) readUnsigned(max uint64, name string) (uint64, error) {
	start := d.off
	v, err := d.ReadUlong()
	if err != nil {
		return 0, err
	}
	if v > max {
		d.off = start
		return 0, d.errorf("%s value %d out of range", name, v)
	}
	return v, nil
}

// ReadUint reads a uint (or a narrower unsigned integer).
func (d *Decoder) ReadUint() (uint32, error) {
	v, err := d.readUnsigned(1<<32-1, "uint")
	return uint32(v), err
}

// ReadUshort reads a ushort (or a ubyte).
func (d *Decoder) ReadUshort() (uint16, error) {
	v, err := d.readUnsigned(1<<16-1, "ushort")
	return uint16(v), err
}

// ReadUbyte reads a ubyte.
func (d *Decoder) ReadUbyte() (uint8, error) {
	v, err := d.readUnsigned(1<<8-1, "ubyte")
	return uint8(v), err
}

// ReadLong reads a signed integer of any width.
func (d *Decoder) ReadLong() (int64, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return 0, err
	}
	switch code {
	case codeByte, codeSmallInt, codeSmallLong:
		if err := d.need(1); err != nil {
			return 0, err
		}
		return int64(int8(d.u8())), nil
	case codeShort:
		if err := d.need(2); err != nil {
			return 0, err
		}
		return int64(int16(d.u16())), nil
	case codeInt:
		if err := d.need(4); err != nil {
			return 0, err
		}
		return int64(int32(d.u32())), nil
	case codeLong:
		if err := d.need(8); err != nil {
			return 0, err
		}
		return int64(d.u64()), nil
	}
	return 0, d.wrongType(start, code, "a signed integer")
}

// ReadInt reads an int (or a narrower signed integer).
func (d *Decoder) ReadInt() (int32, error) {
	start := d.off
	v, err := d.ReadLong()
	if err != nil {
		return 0, err
	}
	if v < -1<<31 || v > 1<<31-1 {
		d.off = start
		return 0, d.errorf("int value %d out of range", v)
	}
	return int32(v), nil
}

// ReadString reads a string. A symbol is accepted too, as some peers send
// addresses as symbols.
func (d *Decoder) ReadString() (string, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return "", err
	}
	switch code {
	case codeStr8, codeStr32, codeSym8, codeSym32:
		return d.readStringBody(code)
	}
	return "", d.wrongType(start, code, "a string")
}

// ReadSymbol reads a symbol (a string is accepted too).
func (d *Decoder) ReadSymbol() (Symbol, error) {
	s, err := d.ReadString()
	return Symbol(s), err
}

// ReadBinary reads a binary; the result aliases the input.
func (d *Decoder) ReadBinary() ([]byte, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return nil, err
	}
	switch code {
	case codeVbin8, codeVbin32:
		return d.readBinaryBody(code)
	}
	return nil, d.wrongType(start, code, "a binary")
}

// ReadTimestamp reads a timestamp as a UTC time.
func (d *Decoder) ReadTimestamp() (time.Time, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return time.Time{}, err
	}
	if code != codeTimestamp {
		return time.Time{}, d.wrongType(start, code, "a timestamp")
	}
	if err := d.need(8); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(d.u64())).UTC(), nil
}

// ReadUUID reads a uuid.
func (d *Decoder) ReadUUID() (UUID, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return UUID{}, err
	}
	if code != codeUUID {
		return UUID{}, d.wrongType(start, code, "a uuid")
	}
	if err := d.need(16); err != nil {
		return UUID{}, err
	}
	var u UUID
	d.off += copy(u[:], d.buf[d.off:])
	return u, nil
}

// ReadSymbols reads a "multiple" symbol field: one symbol or an array of
// symbols.
func (d *Decoder) ReadSymbols() ([]Symbol, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return nil, err
	}
	switch code {
	case codeSym8, codeSym32:
		s, err := d.readStringBody(code)
		if err != nil {
			return nil, err
		}
		return []Symbol{Symbol(s)}, nil
	case codeArray8, codeArray32:
		v, err := d.readArrayBody(code)
		if err != nil {
			return nil, err
		}
		if s, ok := v.([]Symbol); ok {
			return s, nil
		}
		d.off = start
		return nil, d.errorf("array of %T where symbols were expected", v)
	}
	return nil, d.wrongType(start, code, "a symbol or an array of symbols")
}

// ReadMap reads a map.
func (d *Decoder) ReadMap() (Map, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return nil, err
	}
	switch code {
	case codeMap8, codeMap32:
		return d.readMapBody(code)
	}
	return nil, d.wrongType(start, code, "a map")
}

// ReadList reads a list.
func (d *Decoder) ReadList() ([]any, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return nil, err
	}
	switch code {
	case codeList0, codeList8, codeList32:
		return d.readListBody(code)
	}
	return nil, d.wrongType(start, code, "a list")
}

// ReadDescriptor reads the constructor of a described value (0x00 and the
// descriptor) and returns the numeric descriptor code; symbolic descriptors
// of the AMQP specification map to their codes. An unknown symbolic
// descriptor returns code 0 and the symbol.
func (d *Decoder) ReadDescriptor() (uint64, Symbol, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return 0, "", err
	}
	if code != codeDescribed {
		return 0, "", d.wrongType(start, code, "a described type")
	}
	desc, err := d.readDescriptorValue()
	if err != nil {
		return 0, "", err
	}
	switch desc := desc.(type) {
	case uint64:
		return desc, "", nil
	case Symbol:
		if c, ok := symbolicDescriptors[string(desc)]; ok {
			return c, "", nil
		}
		return 0, desc, nil
	}
	return 0, "", nil
}
