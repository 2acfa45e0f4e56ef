package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

// Application properties keep their Go types: each value is written as a
// one-byte type tag followed by the value.

// Application property type tags.
const (
	tagNil byte = iota
	tagString
	tagFalse
	tagTrue
	tagInt8
	tagInt16
	tagInt32
	tagInt64
	tagUint8
	tagUint16
	tagUint32
	tagUint64
	tagFloat32
	tagFloat64
	tagTime
	tagDuration
	tagBytes
	tagLockToken
	tagUUID
)

// checkRules returns a CodeInvalid error for a rule whose filter properties
// or parameters hold a value of a type the codec cannot store.
func checkRules(rules []broker.Rule) error {
	for _, r := range rules {
		name := "rule " + strconvQuote(r.Name)
		if r.Filter != nil {
			if err := checkProps(r.Filter.Properties, name+" filter property"); err != nil {
				return err
			}
		}
		if err := checkProps(r.Parameters, name+" filter parameter"); err != nil {
			return err
		}
		if err := checkProps(r.ActionParameters, name+" action parameter"); err != nil {
			return err
		}
	}
	return nil
}

// checkProps returns a CodeInvalid error naming the first property (in key
// order) whose type the codec cannot store.
func checkProps(m map[string]any, what string) error {
	var bad []string
	for k, v := range m {
		if !storableProp(v) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return &broker.Error{
		Code:    broker.CodeInvalid,
		Message: fmt.Sprintf("%s %s has unsupported type %T", what, strconvQuote(bad[0]), m[bad[0]]),
	}
}

func storableProp(v any) bool {
	switch v.(type) {
	case nil, string, bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
		float32, float64, time.Time, time.Duration, []byte, broker.LockToken, uuid.UUID:
		return true
	}
	return false
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// props writes a property map: a uvarint of 0 for nil or the entry count
// plus one, then the entries in key order. The caller has checked the types
// with checkProps.
func (e *encoder) props(m map[string]any) {
	e.lenPlusOne(m == nil, len(m))
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.string(k)
		e.value(m[k])
	}
}

func (e *encoder) value(v any) {
	switch v := v.(type) {
	case nil:
		e.byte(tagNil)
	case string:
		e.byte(tagString)
		e.string(v)
	case bool:
		if v {
			e.byte(tagTrue)
		} else {
			e.byte(tagFalse)
		}
	case int8:
		e.byte(tagInt8)
		e.byte(byte(v))
	case int16:
		e.byte(tagInt16)
		e.varint(int64(v))
	case int32:
		e.byte(tagInt32)
		e.varint(int64(v))
	case int64:
		e.byte(tagInt64)
		e.varint(v)
	case uint8:
		e.byte(tagUint8)
		e.byte(v)
	case uint16:
		e.byte(tagUint16)
		e.uvarint(uint64(v))
	case uint32:
		e.byte(tagUint32)
		e.uvarint(uint64(v))
	case uint64:
		e.byte(tagUint64)
		e.uvarint(v)
	case float32:
		e.byte(tagFloat32)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(v))
	case float64:
		e.byte(tagFloat64)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v))
	case time.Time:
		e.byte(tagTime)
		e.time(v)
	case time.Duration:
		e.byte(tagDuration)
		e.varint(int64(v))
	case []byte:
		e.byte(tagBytes)
		e.nilBytes(v)
	case broker.LockToken:
		e.byte(tagLockToken)
		e.fixed(v[:])
	case uuid.UUID:
		e.byte(tagUUID)
		e.fixed(v[:])
	}
}

func (d *decoder) props() map[string]any {
	n, ok := d.count(2)
	if !ok {
		return nil
	}
	m := make(map[string]any, n)
	prev := ""
	for i := range n {
		k := d.string()
		if d.err != nil {
			return nil
		}
		if i > 0 && k <= prev {
			d.fail("property keys out of order at %q", k)
			return nil
		}
		prev = k
		m[k] = d.value()
	}
	return m
}

func (d *decoder) value() any {
	switch tag := d.byte(); tag {
	case tagNil:
		return nil
	case tagString:
		return d.string()
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt8:
		return int8(d.byte())
	case tagInt16:
		v := d.varint()
		if v < math.MinInt16 || v > math.MaxInt16 {
			d.fail("int16 %d out of range", v)
		}
		return int16(v)
	case tagInt32:
		return d.int32()
	case tagInt64:
		return d.varint()
	case tagUint8:
		return d.byte()
	case tagUint16:
		v := d.uvarint()
		if v > math.MaxUint16 {
			d.fail("uint16 %d out of range", v)
		}
		return uint16(v)
	case tagUint32:
		return d.uint32()
	case tagUint64:
		return d.uvarint()
	case tagFloat32:
		b := d.fixed(4)
		if b == nil {
			return nil
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case tagFloat64:
		b := d.fixed(8)
		if b == nil {
			return nil
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case tagTime:
		return d.time()
	case tagDuration:
		return time.Duration(d.varint())
	case tagBytes:
		return d.nilBytes()
	case tagLockToken:
		var t broker.LockToken
		copy(t[:], d.fixed(16))
		return t
	case tagUUID:
		var u uuid.UUID
		copy(u[:], d.fixed(16))
		return u
	default:
		d.fail("unknown property type tag %d", tag)
		return nil
	}
}
