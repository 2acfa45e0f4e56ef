package amqpserver

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// Descriptors of the .NET types the Service Bus SDKs put in property maps.
const (
	descTimeSpan       wire.Symbol = sbamqp.DescTimeSpan
	descDateTimeOffset wire.Symbol = sbamqp.DescDateTimeOffset
	descURI            wire.Symbol = sbamqp.DescURI
)

// propertiesToModify converts an AMQP map of properties (the
// message-annotations of a modified outcome, the info of a dead-letter
// rejection, properties-to-modify of update-disposition) into application
// property values of the broker's value model. Keys must be strings or
// symbols; values simple (Service Bus allows no lists or maps there).
func propertiesToModify(m wire.Map) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for _, kv := range m {
		var key string
		switch k := kv.Key.(type) {
		case string:
			key = k
		case wire.Symbol:
			key = string(k)
		default:
			return nil, broker.Errorf(broker.CodeInvalid, "a property key of type %T; want a string", kv.Key)
		}
		v, err := propertyValue(kv.Value)
		if err != nil {
			return nil, broker.Errorf(broker.CodeInvalid, "property %q: %v", key, err)
		}
		out[key] = v
	}
	return out, nil
}

// propertyValue converts one property value.
func propertyValue(v any) (any, error) {
	switch x := v.(type) {
	case []byte:
		return append([]byte(nil), x...), nil // decoded bytes alias the frame buffer
	case nil, bool, string, time.Time,
		int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64:
		return x, nil
	case wire.Symbol:
		return string(x), nil
	case wire.Char:
		return x.String(), nil
	case wire.UUID:
		return uuid.UUID(x), nil
	case wire.Described:
		sym, _ := x.Descriptor.(wire.Symbol)
		switch sym {
		case descTimeSpan:
			if ticks, ok := x.Value.(int64); ok {
				return time.Duration(ticks) * 100, nil
			}
		case descDateTimeOffset:
			if ticks, ok := x.Value.(int64); ok {
				return time.Unix(0, (ticks-sbamqp.DotNetEpochTicks)*100).UTC(), nil
			}
		case descURI:
			if s, ok := x.Value.(string); ok {
				return s, nil
			}
		}
		return nil, fmt.Errorf("a described value %v is not supported", x.Descriptor)
	}
	return nil, fmt.Errorf("a value of type %T is not supported; Service Bus allows only simple types", v)
}
