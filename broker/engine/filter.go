package engine

import (
	"math"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// correlationMatch reports whether every set field of f equals m's.
func correlationMatch(f *broker.CorrelationFilter, m *broker.Message) bool {
	eq := func(want, got string) bool { return want == "" || want == got }
	if !eq(f.CorrelationID, m.CorrelationID) || !eq(f.MessageID, m.MessageID) || !eq(f.To, m.To) ||
		!eq(f.ReplyTo, m.ReplyTo) || !eq(f.Subject, m.Subject) || !eq(f.SessionID, m.SessionID) ||
		!eq(f.ReplyToSessionID, m.ReplyToSessionID) || !eq(f.ContentType, m.ContentType) {
		return false
	}
	for k, want := range f.Properties {
		got, ok := m.ApplicationProperties[k]
		if !ok || !sameValue(want, got) {
			return false
		}
	}
	return true
}

// sameValue compares property values: numbers by value whatever their Go
// type (a filter read from JSON holds int64 or float64, a message may hold
// int32), everything else by equality.
func sameValue(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	switch a := a.(type) {
	case time.Time:
		b, ok := b.(time.Time)
		return ok && a.Equal(b)
	case []byte:
		b, ok := b.([]byte)
		return ok && string(a) == string(b)
	}
	defer func() { _ = recover() }() // uncomparable dynamic types never match
	return a == b
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int:
		return float64(v), true
	case int8:
		return float64(v), true
	case int16:
		return float64(v), true
	case int32:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint:
		return float64(v), true
	case uint8:
		return float64(v), true
	case uint16:
		return float64(v), true
	case uint32:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float32:
		return float64(v), true
	case float64:
		if math.IsNaN(v) {
			return 0, false
		}
		return v, true
	}
	return 0, false
}
