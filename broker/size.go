package broker

import (
	"time"

	"github.com/google/uuid"
)

// MessageSize is a message's Size, defined once for every endpoint: the
// number the embedded broker counts against MaxMessageSizeInKilobytes and
// MaxSizeInMegabytes, and the one the dashboard shows for a message of a
// remote endpoint (Service Bus does not send Size over AMQP). It counts the
// body, the string broker properties, and each application property's name
// plus its value (strings and byte slices by length, numbers and booleans by
// their fixed width, times and durations 8 bytes, UUIDs 16). Service Bus
// counts its own encoding; this stays within a few bytes per property of it.
func MessageSize(m *Message) int64 {
	n := int64(len(m.Body))
	for _, s := range [...]string{m.MessageID, m.ContentType, m.CorrelationID, m.Subject, m.To,
		m.ReplyTo, m.ReplyToSessionID, m.SessionID, m.PartitionKey, m.ViaPartitionKey} {
		n += int64(len(s))
	}
	for k, v := range m.ApplicationProperties {
		n += int64(len(k)) + valueSize(v)
	}
	return n
}

func valueSize(v any) int64 {
	switch v := v.(type) {
	case nil:
		return 0
	case string:
		return int64(len(v))
	case []byte:
		return int64(len(v))
	case bool, int8, uint8:
		return 1
	case int16, uint16:
		return 2
	case int32, uint32, float32:
		return 4
	case int64, uint64, float64, int, uint, time.Time, time.Duration:
		return 8
	case uuid.UUID, LockToken:
		return 16
	}
	return 8
}
