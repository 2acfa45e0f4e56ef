package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// The binary record formats of the durable store: this file has what every
// record shares, and codec_message.go, codec_meta.go, codec_entity.go,
// codec_history.go and codec_values.go (application property values) one
// kind each.
//
// Every record starts with one byte, the codec version, so that a later
// version can read records written by this one. Integers are
// encoding/binary varints (zig-zag for signed values), strings and byte
// slices are a uvarint length followed by the bytes, and a time is a varint of
// Unix seconds followed by a uvarint of nanoseconds (the zero time.Time is
// written as absent).

// codecVersion is the first byte of an encoded meta and of other records
// that have one version (duplicate-detection history).
const codecVersion = 1

// stateVersion is the first byte of a session state that carries the time
// it was set; states written before have codecVersion and no time.
const stateVersion = 2

// ErrCorrupt is the cause (Err) of the *broker.Error returned when stored
// bytes cannot be decoded: errors.Is(err, store.ErrCorrupt) reports it.
var ErrCorrupt = errors.New("corrupt record")

// encoder appends to buf.
type encoder struct {
	buf []byte
}

func (e *encoder) byte(b byte)       { e.buf = append(e.buf, b) }
func (e *encoder) uvarint(v uint64)  { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) varint(v int64)    { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) string(s string)   { e.uvarint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) bytes(b []byte)    { e.uvarint(uint64(len(b))); e.buf = append(e.buf, b...) }
func (e *encoder) nilBytes(b []byte) { e.lenPlusOne(b == nil, len(b)); e.buf = append(e.buf, b...) }
func (e *encoder) time(t time.Time)  { e.varint(t.Unix()); e.uvarint(uint64(t.Nanosecond())) }
func (e *encoder) fixed(b []byte)    { e.buf = append(e.buf, b...) }

// optTime writes a time that may be zero: a byte 0, or 1 and the time.
func (e *encoder) optTime(t time.Time) {
	if t.IsZero() {
		e.byte(0)
		return
	}
	e.byte(1)
	e.time(t)
}
func (e *encoder) lenPlusOne(isNil bool, n int) {
	if isNil {
		e.uvarint(0)
	} else {
		e.uvarint(uint64(n) + 1)
	}
}

// decoder reads from b. The first failure is kept in err; every later read
// returns a zero value, so decoding code checks err once at the end.
type decoder struct {
	b    []byte
	what string // "message", "meta", "entity": for error messages
	err  error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = &broker.Error{
			Code:    broker.CodeUnknown,
			Message: fmt.Sprintf("corrupt stored %s: %s", d.what, fmt.Sprintf(format, args...)),
			Err:     ErrCorrupt,
		}
	}
	d.b = nil
}

func (d *decoder) version() {
	if v := d.byte(); d.err == nil && v != codecVersion {
		d.fail("unknown codec version %d", v)
	}
}

func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint32() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail("value %d out of range", v)
		return 0
	}
	return uint32(v)
}

func (d *decoder) int32() int32 {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("value %d out of range", v)
		return 0
	}
	return int32(v)
}

// fixed returns the next n bytes (not copied).
func (d *decoder) fixed(n int) []byte {
	if len(d.b) < n {
		d.fail("truncated")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// length reads a length and checks that that many bytes follow.
func (d *decoder) length() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("length %d beyond the end", n)
		return 0
	}
	return int(n)
}

func (d *decoder) string() string { return string(d.fixed(d.length())) }

// bytes reads a byte slice written by encoder.bytes; an empty one is nil.
func (d *decoder) bytes() []byte {
	n := d.length()
	if n == 0 {
		return nil
	}
	return slices.Clone(d.fixed(n))
}

// count reads a count written by lenPlusOne: ok is false for nil. Each entry
// takes at least minSize bytes, which bounds the count by what is left.
func (d *decoder) count(minSize int) (n int, ok bool) {
	v := d.uvarint()
	if v == 0 || d.err != nil {
		return 0, false
	}
	v--
	if v > uint64(len(d.b)/minSize) {
		d.fail("count %d beyond the end", v)
		return 0, false
	}
	return int(v), true
}

func (d *decoder) nilBytes() []byte {
	n, ok := d.count(1)
	if !ok {
		return nil
	}
	b := make([]byte, n)
	copy(b, d.fixed(n))
	return b
}

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if d.err != nil {
		return time.Time{}
	}
	if nsec >= 1e9 {
		d.fail("nanoseconds %d out of range", nsec)
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// optTime reads a time written by encoder.optTime.
func (d *decoder) optTime() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		return d.time()
	}
	d.fail("bad time flag")
	return time.Time{}
}
