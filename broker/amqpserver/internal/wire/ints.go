package wire

import "math"

// IntValue returns an integer of any width and signedness as an int64, when
// it fits. Management requests carry numbers in whatever width the client
// chose.
func IntValue(v any) (int64, bool) {
	if n, ok := asInt64(v); ok {
		return n, true
	}
	if u, ok := asUint64(v); ok && u <= math.MaxInt64 {
		return int64(u), true
	}
	return 0, false
}

// UintValue returns a non-negative integer of any width and signedness as a
// uint64.
func UintValue(v any) (uint64, bool) {
	if u, ok := asUint64(v); ok {
		return u, true
	}
	if n, ok := asInt64(v); ok && n >= 0 {
		return uint64(n), true
	}
	return 0, false
}

// asUint64 returns an unsigned integer of any width as a uint64.
func asUint64(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case uint:
		return uint64(x), true
	}
	return 0, false
}

// asInt64 returns a signed integer of any width as an int64.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}
