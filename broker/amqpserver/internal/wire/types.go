package wire

import (
	"encoding/hex"
	"reflect"
	"unicode/utf8"
)

// Symbol is an AMQP symbol: an ASCII name such as a capability, an error
// condition or an annotation key.
type Symbol string

// UUID is an AMQP uuid: 16 bytes in RFC 4122 (network) order.
type UUID [16]byte

// String returns the canonical 8-4-4-4-12 lower-case hex form.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

// Char is an AMQP char: one Unicode code point, encoded as UTF-32BE.
type Char rune

// String returns the character as a one-rune string; an invalid code point
// becomes U+FFFD.
func (c Char) String() string {
	if !utf8.ValidRune(rune(c)) {
		return string(utf8.RuneError)
	}
	return string(rune(c))
}

// Decimal32 is an IEEE 754-2008 decimal32 in its encoded bytes; this package
// carries decimals without interpreting them.
type Decimal32 [4]byte

// Decimal64 is an IEEE 754-2008 decimal64 in its encoded bytes.
type Decimal64 [8]byte

// Decimal128 is an IEEE 754-2008 decimal128 in its encoded bytes.
type Decimal128 [16]byte

// Described is a described type whose descriptor this package does not
// interpret: Descriptor is a uint64 (numeric descriptor) or a Symbol, Value
// is the described value in this package's value model.
type Described struct {
	Descriptor any
	Value      any
}

// KeyValue is one entry of a Map.
type KeyValue struct {
	Key   any
	Value any
}

// Map is an AMQP map kept in wire order. Keys are usually Symbol (fields,
// annotations) or string (application properties, management bodies), and
// sometimes uint64. A Map does not deduplicate keys; Get finds the first.
type Map []KeyValue

// Get returns the value of the first entry whose key is the string or the
// symbol name.
func (m Map) Get(name string) (any, bool) {
	for _, kv := range m {
		switch k := kv.Key.(type) {
		case string:
			if k == name {
				return kv.Value, true
			}
		case Symbol:
			if string(k) == name {
				return kv.Value, true
			}
		}
	}
	return nil, false
}

// Lookup returns the value of the first entry whose key equals key exactly
// (same Go type and value); keys must be comparable.
func (m Map) Lookup(key any) (any, bool) {
	for _, kv := range m {
		if keyEqual(kv.Key, key) {
			return kv.Value, true
		}
	}
	return nil, false
}

// keyEqual compares two map keys; uncomparable keys (binary, lists) are
// never equal.
func keyEqual(a, b any) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb || (ta != nil && !ta.Comparable()) {
		return false
	}
	return a == b
}

// Array is an AMQP array whose elements this package does not decode into
// a typed Go slice: arrays of ubyte, char, decimals, lists, arrays, nulls,
// and arrays of described values. Code is the element constructor's format
// code (for described elements, the code of the underlying encoding), and
// Descriptor is the shared descriptor of described elements, nil otherwise.
// Elements hold the element values; for described arrays, the underlying
// values without the descriptor.
type Array struct {
	Descriptor any
	Code       byte
	Elements   []any
}
