package wire

import (
	"strconv"
	"time"
)

// compositeWriter writes the list of a composite type field by field and
// omits trailing null fields, as §1.4 allows.
type compositeWriter struct {
	start   int // offset of the list constructor
	n       int // fields written
	keepLen int // buffer length after the last non-null field
	keepN   int // field count up to the last non-null field
}

// beginComposite writes the descriptor and reserves the list header.
func beginComposite(b []byte, desc uint64) ([]byte, compositeWriter) {
	b = append(b, codeDescribed, codeSmallUlong, byte(desc))
	b, start := beginCompound(b, codeList32)
	return b, compositeWriter{start: start, keepLen: len(b)}
}

// end drops the trailing nulls and completes the list.
func (c *compositeWriter) end(b []byte) []byte {
	return endList(b[:c.keepLen], c.start, c.keepN)
}

// null writes an absent field.
func (c *compositeWriter) null(b []byte) []byte {
	c.n++
	return append(b, codeNull)
}

// done records a non-null field just written.
func (c *compositeWriter) done(b []byte) []byte {
	c.n++
	c.keepLen, c.keepN = len(b), c.n
	return b
}

// raw writes a field given encoded.
func (c *compositeWriter) raw(b, v []byte) []byte {
	return c.done(append(b, v...))
}

func (c *compositeWriter) str(b []byte, v string, set bool) []byte {
	if !set {
		return c.null(b)
	}
	return c.done(AppendString(b, v))
}

func (c *compositeWriter) symbol(b []byte, v Symbol, set bool) []byte {
	if !set {
		return c.null(b)
	}
	return c.done(AppendSymbol(b, v))
}

func (c *compositeWriter) symbols(b []byte, v []Symbol) []byte {
	if len(v) == 0 {
		return c.null(b)
	}
	return c.done(AppendSymbolArray(b, v))
}

func (c *compositeWriter) boolean(b []byte, v, set bool) []byte {
	if !set {
		return c.null(b)
	}
	return c.done(AppendBool(b, v))
}

func (c *compositeWriter) ubyte(b []byte, v uint8, set bool) []byte {
	if !set {
		return c.null(b)
	}
	return c.done(AppendUbyte(b, v))
}

func (c *compositeWriter) ushort(b []byte, v uint16, set bool) []byte {
	if !set {
		return c.null(b)
	}
	return c.done(AppendUshort(b, v))
}

func (c *compositeWriter) uint(b []byte, v uint32, set bool) []byte {
	if !set {
		return c.null(b)
	}
	return c.done(AppendUint(b, v))
}

func (c *compositeWriter) ulong(b []byte, v uint64, set bool) []byte {
	if !set {
		return c.null(b)
	}
	return c.done(AppendUlong(b, v))
}

func (c *compositeWriter) binary(b []byte, v []byte, set bool) []byte {
	if !set {
		return c.null(b)
	}
	return c.done(AppendBinary(b, v))
}

func (c *compositeWriter) timestamp(b []byte, v time.Time, set bool) []byte {
	if !set {
		return c.null(b)
	}
	return c.done(AppendTimestamp(b, v))
}

func (c *compositeWriter) fields(b []byte, m Map) ([]byte, error) {
	if m == nil {
		return c.null(b), nil
	}
	b, err := AppendMap(b, m)
	if err != nil {
		return b, err
	}
	return c.done(b), nil
}

// fieldReader reads the fields of a composite's list in order. Each read
// reports whether the field was present (neither missing nor null); the
// first error sticks and ends the reading.
type fieldReader struct {
	d       *Decoder
	name    string
	left    int
	end     int
	outer   []byte
	bounded bool
	err     error
}

// readComposite reads a composite's descriptor, which must be want, and its
// list header, and bounds the decoder at the list's end until finish.
func (d *Decoder) readComposite(want uint64) (fieldReader, error) {
	start := d.off
	code, sym, err := d.ReadDescriptor()
	if err != nil {
		return fieldReader{}, err
	}
	if code != want || sym != "" {
		d.off = start
		return fieldReader{}, d.errorf("%s where %s was expected", descriptorName(code, sym), descriptorNames[want])
	}
	return d.readCompositeList(descriptorNames[want])
}

// readCompositeList reads the list header of a composite whose descriptor
// has been read.
func (d *Decoder) readCompositeList(name string) (fieldReader, error) {
	lstart := d.off
	lcode, err := d.readCode()
	if err != nil {
		return fieldReader{}, err
	}
	if lcode == codeList0 {
		return fieldReader{d: d, name: name, end: d.off}, nil
	}
	if lcode != codeList8 && lcode != codeList32 {
		return fieldReader{}, d.wrongType(lstart, lcode, "the list of "+name)
	}
	count, end, err := d.readCompoundHeader(lcode)
	if err != nil {
		return fieldReader{}, err
	}
	if count > end-d.off {
		return fieldReader{}, d.errorf("%s: %d fields in %d bytes", name, count, end-d.off)
	}
	if err := d.enter(); err != nil {
		return fieldReader{}, err
	}
	f := fieldReader{d: d, name: name, left: count, end: end, outer: d.buf, bounded: true}
	d.buf = d.buf[:end]
	return f, nil
}

// descriptorName names a descriptor for error messages.
func descriptorName(code uint64, sym Symbol) string {
	if sym != "" {
		return "described type " + string(sym)
	}
	if n, ok := descriptorNames[code]; ok {
		return n
	}
	return "described type 0x" + strconv.FormatUint(code, 16)
}

// next moves to the next field and reports whether it holds a value; a null
// field is consumed.
func (f *fieldReader) next() bool {
	if f.err != nil || f.left == 0 {
		return false
	}
	f.left--
	return !f.d.PeekNull()
}

// finish skips fields this package does not know, restores the decoder's
// bound and returns the first error.
func (f *fieldReader) finish() error {
	if f.bounded {
		f.d.buf = f.outer
		f.d.leave()
		f.bounded = false
	}
	if f.err != nil {
		return f.err
	}
	// Fields beyond those this package knows, and fields left unread, are
	// skipped.
	f.d.off = f.end
	return nil
}

// required records an error if a mandatory field was absent.
func (f *fieldReader) required(present bool, field string) {
	if !present && f.err == nil {
		f.err = f.d.errorf("%s: mandatory field %s is missing", f.name, field)
	}
}

// field reads one field with read if it is present.
func field[T any](f *fieldReader, dst *T, read func(*Decoder) (T, error)) bool {
	if !f.next() {
		return false
	}
	v, err := read(f.d)
	if err != nil {
		f.err = err
		return false
	}
	*dst = v
	return true
}

// optField reads one optional field into an Opt.
func optField[T any](f *fieldReader, dst *Opt[T], read func(*Decoder) (T, error)) bool {
	if field(f, &dst.Value, read) {
		dst.Set = true
		return true
	}
	return false
}
