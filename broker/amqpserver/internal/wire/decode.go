package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// maxDepth bounds the nesting of lists, maps, arrays and described values,
// so hostile input cannot recurse without limit.
const maxDepth = 64

// Decoder reads AMQP values from a byte slice. Every read checks bounds:
// corrupt input yields a *DecodeError, never a panic, and counts in headers
// are checked against the bytes that remain before anything is allocated.
type Decoder struct {
	buf   []byte
	off   int
	depth int
	// copyBytes makes binary values copies instead of aliases of buf.
	copyBytes bool
}

// NewDecoder returns a decoder that reads b from its start. Binary values it
// returns alias b.
func NewDecoder(b []byte) *Decoder { return &Decoder{buf: b} }

// Offset returns the offset of the next unread byte.
func (d *Decoder) Offset() int { return d.off }

// Len returns the number of unread bytes.
func (d *Decoder) Len() int { return len(d.buf) - d.off }

// DecodeValue decodes one value from the start of b and returns it with the
// number of bytes it took.
func DecodeValue(b []byte) (any, int, error) {
	d := Decoder{buf: b}
	v, err := d.ReadAny()
	return v, d.off, err
}

// errorf builds a *DecodeError at the current offset.
func (d *Decoder) errorf(format string, args ...any) error {
	return &DecodeError{Offset: d.off, Msg: fmt.Sprintf(format, args...)}
}

// need fails unless n more bytes are available.
func (d *Decoder) need(n int) error {
	if n < 0 || n > len(d.buf)-d.off {
		return d.errorf("need %d bytes, %d left", n, len(d.buf)-d.off)
	}
	return nil
}

// readCode reads a constructor's format code.
func (d *Decoder) readCode() (byte, error) {
	if d.off >= len(d.buf) {
		return 0, d.errorf("unexpected end of input")
	}
	c := d.buf[d.off]
	d.off++
	return c, nil
}

// PeekNull reports whether the next value is an AMQP null, consuming it if so.
func (d *Decoder) PeekNull() bool {
	if d.off < len(d.buf) && d.buf[d.off] == codeNull {
		d.off++
		return true
	}
	return false
}

func (d *Decoder) u8() byte {
	v := d.buf[d.off]
	d.off++
	return v
}

func (d *Decoder) u16() uint16 {
	v := binary.BigEndian.Uint16(d.buf[d.off:])
	d.off += 2
	return v
}

func (d *Decoder) u32() uint32 {
	v := binary.BigEndian.Uint32(d.buf[d.off:])
	d.off += 4
	return v
}

func (d *Decoder) u64() uint64 {
	v := binary.BigEndian.Uint64(d.buf[d.off:])
	d.off += 8
	return v
}

// bytes returns the next n bytes, aliasing the input with capacity clipped
// (or copied when the decoder copies).
func (d *Decoder) bytes(n int) ([]byte, error) {
	if err := d.need(n); err != nil {
		return nil, err
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	if d.copyBytes {
		b = append([]byte(nil), b...)
	}
	return b, nil
}

// fixedWidth returns the byte width of a fixed-width encoding, or -1 for a
// variable-width or compound one.
func fixedWidth(code byte) int {
	switch code {
	case codeNull, codeTrue, codeFalse, codeUint0, codeUlong0, codeList0:
		return 0
	case codeBool, codeUbyte, codeByte, codeSmallUint, codeSmallUlong, codeSmallInt, codeSmallLong:
		return 1
	case codeUshort, codeShort:
		return 2
	case codeUint, codeInt, codeFloat, codeChar, codeDecimal32:
		return 4
	case codeUlong, codeLong, codeDouble, codeTimestamp, codeDecimal64:
		return 8
	case codeUUID, codeDecimal128:
		return 16
	}
	return -1
}

// minWidth returns the fewest bytes one element of the encoding takes.
func minWidth(code byte) int {
	if w := fixedWidth(code); w >= 0 {
		return w
	}
	switch code {
	case codeVbin8, codeStr8, codeSym8:
		return 1
	case codeList8, codeMap8, codeArray8:
		return 2
	}
	return 4 // 32-bit length or size fields
}

// ReadAny reads one value of any type into the value model of the package
// documentation.
func (d *Decoder) ReadAny() (any, error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return nil, err
	}
	if code == codeDescribed {
		return d.readDescribedRest()
	}
	v, err := d.readBody(code)
	if err != nil {
		d.off = start
		return nil, err
	}
	return v, nil
}

// readDescribedRest reads a described value after its 0x00 constructor.
func (d *Decoder) readDescribedRest() (any, error) {
	if d.depth >= maxDepth {
		return nil, d.errorf("values nested deeper than %d", maxDepth)
	}
	d.depth++
	defer d.leave()
	desc, err := d.readDescriptorValue()
	if err != nil {
		return nil, err
	}
	v, err := d.ReadAny()
	if err != nil {
		return nil, err
	}
	return Described{Descriptor: desc, Value: v}, nil
}

// readDescriptorValue reads a descriptor (after the 0x00): a ulong or a
// symbol.
func (d *Decoder) readDescriptorValue() (any, error) {
	code, err := d.readCode()
	if err != nil {
		return nil, err
	}
	switch code {
	case codeUlong0, codeSmallUlong, codeUlong:
		return d.readUlongBody(code)
	case codeSym8, codeSym32:
		s, err := d.readStringBody(code)
		return Symbol(s), err
	}
	d.off--
	return nil, d.errorf("descriptor with constructor 0x%02x: want ulong or symbol", code)
}

// readBody reads the bytes that follow a (non-described) constructor.
func (d *Decoder) readBody(code byte) (any, error) {
	if w := fixedWidth(code); w > 0 {
		if err := d.need(w); err != nil {
			return nil, err
		}
	}
	switch code {
	case codeNull:
		return nil, nil
	case codeTrue:
		return true, nil
	case codeFalse:
		return false, nil
	case codeBool:
		return d.readBoolByte()
	case codeUbyte:
		return d.u8(), nil
	case codeUshort:
		return d.u16(), nil
	case codeUint0:
		return uint32(0), nil
	case codeSmallUint:
		return uint32(d.u8()), nil
	case codeUint:
		return d.u32(), nil
	case codeUlong0, codeSmallUlong, codeUlong:
		return d.readUlongBody(code)
	case codeByte:
		return int8(d.u8()), nil
	case codeShort:
		return int16(d.u16()), nil
	case codeSmallInt:
		return int32(int8(d.u8())), nil
	case codeInt:
		return int32(d.u32()), nil
	case codeSmallLong:
		return int64(int8(d.u8())), nil
	case codeLong:
		return int64(d.u64()), nil
	case codeFloat:
		return math.Float32frombits(d.u32()), nil
	case codeDouble:
		return math.Float64frombits(d.u64()), nil
	case codeDecimal32:
		var v Decimal32
		d.off += copy(v[:], d.buf[d.off:])
		return v, nil
	case codeDecimal64:
		var v Decimal64
		d.off += copy(v[:], d.buf[d.off:])
		return v, nil
	case codeDecimal128:
		var v Decimal128
		d.off += copy(v[:], d.buf[d.off:])
		return v, nil
	case codeChar:
		return Char(d.u32()), nil
	case codeTimestamp:
		return time.UnixMilli(int64(d.u64())).UTC(), nil
	case codeUUID:
		var v UUID
		d.off += copy(v[:], d.buf[d.off:])
		return v, nil
	case codeVbin8, codeVbin32:
		return d.readBinaryBody(code)
	case codeStr8, codeStr32:
		return d.readStringBody(code)
	case codeSym8, codeSym32:
		s, err := d.readStringBody(code)
		return Symbol(s), err
	case codeList0, codeList8, codeList32:
		return d.readListBody(code)
	case codeMap8, codeMap32:
		return d.readMapBody(code)
	case codeArray8, codeArray32:
		return d.readArrayBody(code)
	}
	d.off--
	return nil, d.errorf("unknown constructor 0x%02x", code)
}

func (d *Decoder) readBoolByte() (bool, error) {
	switch d.u8() {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	d.off--
	return false, d.errorf("boolean byte 0x%02x: want 0 or 1", d.buf[d.off])
}

func (d *Decoder) readUlongBody(code byte) (uint64, error) {
	switch code {
	case codeUlong0:
		return 0, nil
	case codeSmallUlong:
		if err := d.need(1); err != nil {
			return 0, err
		}
		return uint64(d.u8()), nil
	}
	if err := d.need(8); err != nil {
		return 0, err
	}
	return d.u64(), nil
}

// readLength reads the 1- or 4-byte length of a variable-width value and
// checks that the bytes are there.
func (d *Decoder) readLength(short bool) (int, error) {
	var n int
	if short {
		if err := d.need(1); err != nil {
			return 0, err
		}
		n = int(d.u8())
	} else {
		if err := d.need(4); err != nil {
			return 0, err
		}
		n = int(d.u32())
	}
	if err := d.need(n); err != nil {
		return 0, err
	}
	return n, nil
}

func (d *Decoder) readBinaryBody(code byte) ([]byte, error) {
	n, err := d.readLength(code == codeVbin8)
	if err != nil {
		return nil, err
	}
	return d.bytes(n)
}

func (d *Decoder) readStringBody(code byte) (string, error) {
	n, err := d.readLength(code&0xf0 == 0xa0)
	if err != nil {
		return "", err
	}
	s := string(d.buf[d.off : d.off+n])
	d.off += n
	return s, nil
}

// readCompoundHeader reads the size and count of a list, map or array body
// and returns the count and the offset just past the compound. It checks
// that the size fits in the input and that count elements of at least
// minElem bytes each fit in the size.
func (d *Decoder) readCompoundHeader(code byte) (count, end int, err error) {
	var size int
	if code == codeList8 || code == codeMap8 || code == codeArray8 {
		if err := d.need(2); err != nil {
			return 0, 0, err
		}
		size, count = int(d.u8()), int(d.u8())
		size--
	} else {
		if err := d.need(8); err != nil {
			return 0, 0, err
		}
		size, count = int(d.u32()), int(d.u32())
		size -= 4
	}
	if size < 0 {
		return 0, 0, d.errorf("compound size smaller than its count field")
	}
	if err := d.need(size); err != nil {
		return 0, 0, err
	}
	return count, d.off + size, nil
}

// enter and leave bound the nesting depth.
func (d *Decoder) enter() error {
	if d.depth >= maxDepth {
		return d.errorf("values nested deeper than %d", maxDepth)
	}
	d.depth++
	return nil
}

func (d *Decoder) leave() { d.depth-- }

// bound limits reads to end (the end of a compound) and returns the
// previous buffer for unbound.
func (d *Decoder) bound(end int) []byte {
	outer := d.buf
	d.buf = d.buf[:end]
	return outer
}

// unbound restores the buffer and checks that the compound was consumed
// exactly.
func (d *Decoder) unbound(outer []byte, end int, what string, err error) error {
	d.buf = outer
	if err != nil {
		return err
	}
	if d.off != end {
		return d.errorf("%s: %d bytes left over", what, end-d.off)
	}
	return nil
}

func (d *Decoder) readListBody(code byte) ([]any, error) {
	if code == codeList0 {
		return []any{}, nil
	}
	count, end, err := d.readCompoundHeader(code)
	if err != nil {
		return nil, err
	}
	if count > end-d.off {
		return nil, d.errorf("list of %d elements in %d bytes", count, end-d.off)
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	l := make([]any, count)
	outer := d.bound(end)
	for i := range l {
		if l[i], err = d.ReadAny(); err != nil {
			break
		}
	}
	if err := d.unbound(outer, end, "list", err); err != nil {
		return nil, err
	}
	return l, nil
}

func (d *Decoder) readMapBody(code byte) (Map, error) {
	count, end, err := d.readCompoundHeader(code)
	if err != nil {
		return nil, err
	}
	if count%2 != 0 {
		return nil, d.errorf("map with an odd element count %d", count)
	}
	if count > end-d.off {
		return nil, d.errorf("map of %d elements in %d bytes", count, end-d.off)
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	m := make(Map, count/2)
	outer := d.bound(end)
	for i := range m {
		if m[i].Key, err = d.ReadAny(); err != nil {
			break
		}
		if m[i].Value, err = d.ReadAny(); err != nil {
			break
		}
	}
	if err := d.unbound(outer, end, "map", err); err != nil {
		return nil, err
	}
	return m, nil
}
