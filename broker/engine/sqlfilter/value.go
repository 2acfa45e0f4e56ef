package sqlfilter

import (
	"math"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

// kind is the type of a value.
type kind uint8

const (
	kNull kind = iota
	kBool
	kInt
	kFloat
	kString
	kOther // time.Time, time.Duration, uuid.UUID, []byte, ...: compared with others of its Go type
)

// value is an evaluated value, kept unboxed so that evaluating a filter does
// not allocate.
type value struct {
	k kind
	i int64 // kInt; kBool: 0 or 1
	f float64
	s string
	o any
}

var null = value{}

func boolValue(b bool) value {
	if b {
		return value{k: kBool, i: 1}
	}
	return value{k: kBool}
}

// fromAny converts a property value to a value.
func fromAny(v any) value {
	switch v := v.(type) {
	case nil:
		return null
	case string:
		return value{k: kString, s: v}
	case bool:
		return boolValue(v)
	case int:
		return value{k: kInt, i: int64(v)}
	case int8:
		return value{k: kInt, i: int64(v)}
	case int16:
		return value{k: kInt, i: int64(v)}
	case int32:
		return value{k: kInt, i: int64(v)}
	case int64:
		return value{k: kInt, i: v}
	case uint:
		return fromUint(uint64(v))
	case uint8:
		return value{k: kInt, i: int64(v)}
	case uint16:
		return value{k: kInt, i: int64(v)}
	case uint32:
		return value{k: kInt, i: int64(v)}
	case uint64:
		return fromUint(v)
	case float32:
		return value{k: kFloat, f: float64(v)}
	case float64:
		return value{k: kFloat, f: v}
	case broker.LockToken:
		return value{k: kOther, o: uuid.UUID(v)}
	}
	return value{k: kOther, o: v}
}

func fromUint(u uint64) value {
	if u > math.MaxInt64 {
		return value{k: kFloat, f: float64(u)}
	}
	return value{k: kInt, i: int64(u)}
}

// toAny converts a value to the Go value an action stores in an application
// property.
func (v value) toAny() any {
	switch v.k {
	case kBool:
		return v.i != 0
	case kInt:
		return v.i
	case kFloat:
		return v.f
	case kString:
		return v.s
	case kOther:
		return v.o
	}
	return nil
}

// text returns v as the text a string system property takes.
func (v value) text() string {
	switch v.k {
	case kString:
		return v.s
	case kNull:
		return ""
	case kBool:
		if v.i != 0 {
			return "True"
		}
		return "False"
	case kInt:
		return strconv.FormatInt(v.i, 10)
	case kFloat:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	}
	switch o := v.o.(type) {
	case uuid.UUID:
		return o.String()
	case time.Time:
		return o.UTC().Format(time.RFC3339Nano)
	case interface{ String() string }:
		return o.String()
	}
	return ""
}

func (v value) num() float64 {
	if v.k == kInt {
		return float64(v.i)
	}
	return v.f
}

func isNum(v value) bool { return v.k == kInt || v.k == kFloat }

// compare compares a and b, neither of them NULL: c is -1, 0 or 1, and ok is
// false when they cannot be compared (incompatible types, NaN). ordered is
// false for types that only have equality.
func compare(a, b value) (c int, ordered, ok bool) {
	switch {
	case isNum(a) && isNum(b):
		if a.k == kInt && b.k == kInt {
			return cmp3(a.i < b.i, a.i > b.i), true, true
		}
		x, y := a.num(), b.num()
		if math.IsNaN(x) || math.IsNaN(y) {
			return 0, true, false
		}
		return cmp3(x < y, x > y), true, true
	case a.k != b.k:
		return 0, false, false
	case a.k == kString:
		return cmp3(a.s < b.s, a.s > b.s), true, true
	case a.k == kBool:
		return cmp3(a.i < b.i, a.i > b.i), false, true
	}
	switch x := a.o.(type) {
	case time.Time:
		y, ok := b.o.(time.Time)
		if !ok {
			return 0, false, false
		}
		return x.Compare(y), true, true
	case time.Duration:
		y, ok := b.o.(time.Duration)
		if !ok {
			return 0, false, false
		}
		return cmp3(x < y, x > y), true, true
	case uuid.UUID:
		y, ok := b.o.(uuid.UUID)
		return cmp3(false, x != y), false, ok
	case []byte:
		y, ok := b.o.([]byte)
		return cmp3(false, string(x) != string(y)), false, ok
	}
	return 0, false, false
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}
