package wire

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// symTimeSpan is the descriptor the Service Bus SDKs use for a TimeSpan
// application property: a long counting 100 ns ticks.
const symTimeSpan Symbol = sbamqp.DescTimeSpan

// symDateTimeOffset is the descriptor of a .NET DateTimeOffset property: a
// long counting 100 ns ticks since 0001-01-01 UTC.
const symDateTimeOffset Symbol = sbamqp.DescDateTimeOffset

// symURI is the descriptor of a .NET Uri property: a string.
const symURI Symbol = sbamqp.DescURI

// AppendValue appends v in the encoding its Go type selects (see the package
// documentation for the value model). It returns an *EncodeError for a type
// it cannot encode, leaving b as it was.
func AppendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return AppendNull(b), nil
	case bool:
		return AppendBool(b, v), nil
	case uint8:
		return AppendUbyte(b, v), nil
	case uint16:
		return AppendUshort(b, v), nil
	case uint32:
		return AppendUint(b, v), nil
	case uint64:
		return AppendUlong(b, v), nil
	case uint:
		return AppendUlong(b, uint64(v)), nil
	case int8:
		return AppendByte(b, v), nil
	case int16:
		return AppendShort(b, v), nil
	case int32:
		return AppendInt(b, v), nil
	case int64:
		return AppendLong(b, v), nil
	case int:
		return AppendLong(b, int64(v)), nil
	case float32:
		return AppendFloat(b, v), nil
	case float64:
		return AppendDouble(b, v), nil
	case Decimal32:
		return AppendDecimal32(b, v), nil
	case Decimal64:
		return AppendDecimal64(b, v), nil
	case Decimal128:
		return AppendDecimal128(b, v), nil
	case Char:
		return AppendChar(b, v), nil
	case time.Time:
		return AppendTimestamp(b, v), nil
	case time.Duration:
		return appendTimeSpan(b, v), nil
	case UUID:
		return AppendUUID(b, v), nil
	case uuid.UUID:
		return AppendUUID(b, UUID(v)), nil
	case broker.LockToken:
		return AppendUUID(b, UUID(v)), nil
	case []byte:
		return AppendBinary(b, v), nil
	case string:
		return AppendString(b, v), nil
	case Symbol:
		return AppendSymbol(b, v), nil
	case []any:
		return AppendList(b, v)
	case Map:
		return AppendMap(b, v)
	case map[string]any:
		return appendGoMap(b, v)
	case map[Symbol]any:
		return appendGoMap(b, v)
	case Described:
		return appendDescribed(b, v)
	case *Described:
		if v == nil {
			return AppendNull(b), nil
		}
		return appendDescribed(b, *v)
	case *Error:
		if v == nil {
			return AppendNull(b), nil
		}
		return v.appendTo(b)
	case DeliveryState:
		return appendDeliveryState(b, v)
	case Array:
		return appendArray(b, v)
	case []Symbol, []string, []UUID, []int64, []int32, []int16, []int8, []uint64, []uint32,
		[]uint16, []bool, []float32, []float64, []time.Time, [][]byte, []Map:
		return appendTypedArray(b, v)
	}
	return appendReflect(b, v)
}

// appendTimeSpan appends a duration as the .NET SDKs encode a TimeSpan.
func appendTimeSpan(b []byte, d time.Duration) []byte {
	b = AppendSymbol(append(b, codeDescribed), symTimeSpan)
	return AppendLong(b, int64(d/100))
}

// appendDescribed appends a described value; the descriptor must be a
// ulong or a symbol.
func appendDescribed(b []byte, d Described) ([]byte, error) {
	start := len(b)
	b = append(b, codeDescribed)
	switch desc := d.Descriptor.(type) {
	case uint64:
		b = AppendUlong(b, desc)
	case Symbol:
		b = AppendSymbol(b, desc)
	case string:
		b = AppendSymbol(b, Symbol(desc))
	default:
		return b[:start], &EncodeError{Msg: fmt.Sprintf("descriptor of type %T: want uint64 or Symbol", d.Descriptor)}
	}
	b, err := AppendValue(b, d.Value)
	if err != nil {
		return b[:start], err
	}
	return b, nil
}

// appendGoMap appends a Go map with its keys in sorted order, so the
// encoding is deterministic.
func appendGoMap[K ~string](b []byte, m map[K]any) ([]byte, error) {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b, start := beginCompound(b, codeMap32)
	for _, k := range keys {
		b = appendKey(b, k)
		var err error
		if b, err = AppendValue(b, m[k]); err != nil {
			return b[:start], err
		}
	}
	return endCompound(b, start, 2*len(m), codeMap8, codeMap32), nil
}

// appendKey writes a string-like map key as a string or, for Symbol keys,
// as a symbol.
func appendKey[K ~string](b []byte, k K) []byte {
	if s, ok := any(k).(Symbol); ok {
		return AppendSymbol(b, s)
	}
	return AppendString(b, string(k))
}

// appendReflect encodes named types by their underlying kind: a named
// string as a string, a [16]byte type (such as go-amqp's UUID) as a uuid.
func appendReflect(b []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return AppendString(b, rv.String()), nil
	case reflect.Bool:
		return AppendBool(b, rv.Bool()), nil
	case reflect.Int8:
		return AppendByte(b, int8(rv.Int())), nil
	case reflect.Int16:
		return AppendShort(b, int16(rv.Int())), nil
	case reflect.Int32:
		return AppendInt(b, int32(rv.Int())), nil
	case reflect.Int, reflect.Int64:
		return AppendLong(b, rv.Int()), nil
	case reflect.Uint8:
		return AppendUbyte(b, uint8(rv.Uint())), nil
	case reflect.Uint16:
		return AppendUshort(b, uint16(rv.Uint())), nil
	case reflect.Uint32:
		return AppendUint(b, uint32(rv.Uint())), nil
	case reflect.Uint, reflect.Uint64:
		return AppendUlong(b, rv.Uint()), nil
	case reflect.Float32:
		return AppendFloat(b, float32(rv.Float())), nil
	case reflect.Float64:
		return AppendDouble(b, rv.Float()), nil
	case reflect.Array:
		if rv.Len() == 16 && rv.Type().Elem().Kind() == reflect.Uint8 {
			var u UUID
			reflect.Copy(reflect.ValueOf(u[:]), rv)
			return AppendUUID(b, u), nil
		}
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return AppendBinary(b, rv.Bytes()), nil
		}
	case reflect.Pointer:
		if rv.IsNil() {
			return AppendNull(b), nil
		}
		return AppendValue(b, rv.Elem().Interface())
	}
	return b, &EncodeError{Msg: fmt.Sprintf("no AMQP encoding for Go type %T", v)}
}
