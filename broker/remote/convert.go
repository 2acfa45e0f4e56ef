package remote

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// toAMQP converts a message to send. Broker-set fields are ignored.
func toAMQP(m *broker.Message) (*amqp.Message, error) {
	out := &amqp.Message{Properties: &amqp.MessageProperties{}}
	p := out.Properties
	if m.MessageID != "" {
		p.MessageID = m.MessageID
	}
	if m.CorrelationID != "" {
		p.CorrelationID = m.CorrelationID
	}
	p.ContentType = strPtr(m.ContentType)
	p.Subject = strPtr(m.Subject)
	p.To = strPtr(m.To)
	p.ReplyTo = strPtr(m.ReplyTo)
	p.ReplyToGroupID = strPtr(m.ReplyToSessionID)
	p.GroupID = strPtr(m.SessionID)
	if m.SessionIDSet && m.SessionID == "" {
		p.GroupID = new(string) // the empty session
	}
	if m.TimeToLive > 0 && m.TimeToLive < broker.MaxTimeToLive {
		out.Header = &amqp.MessageHeader{TTL: m.TimeToLive}
	}
	ann := amqp.Annotations{}
	if m.PartitionKey != "" {
		ann[sbamqp.AnnotPartitionKey] = m.PartitionKey
	}
	if m.ViaPartitionKey != "" {
		ann[sbamqp.AnnotViaPartitionKey] = m.ViaPartitionKey
	}
	if !m.ScheduledEnqueueTime.IsZero() {
		ann[sbamqp.AnnotScheduledEnqueueTime] = m.ScheduledEnqueueTime.UTC()
	}
	if len(ann) > 0 {
		out.Annotations = ann
	}
	if len(m.ApplicationProperties) > 0 {
		out.ApplicationProperties = make(map[string]any, len(m.ApplicationProperties))
		for k, v := range m.ApplicationProperties {
			w, err := propertyToAMQP(v)
			if err != nil {
				return nil, broker.Errorf(broker.CodeInvalid, "application property %q: %v", k, err)
			}
			out.ApplicationProperties[k] = w
		}
	}
	switch m.BodyKind {
	case broker.BodyData:
		if err := m.CheckDataSections(); err != nil {
			return nil, err
		}
		out.Data = m.Sections()
	case broker.BodyValue, broker.BodySequence:
		var sections amqp.Message
		if err := sections.UnmarshalBinary(m.Body); err != nil {
			return nil, broker.Errorf(broker.CodeInvalid, "the %s body cannot be decoded: %v", m.BodyKind, err)
		}
		if m.BodyKind == broker.BodyValue {
			if sections.Value == nil {
				return nil, broker.Errorf(broker.CodeInvalid, "the amqp-value body holds no amqp-value section")
			}
			out.Value = sections.Value
		} else {
			if sections.Sequence == nil {
				return nil, broker.Errorf(broker.CodeInvalid, "the amqp-sequence body holds no amqp-sequence section")
			}
			out.Sequence = sections.Sequence
		}
	default:
		return nil, broker.Errorf(broker.CodeInvalid, "unknown body kind %d", m.BodyKind)
	}
	return out, nil
}

// propertyToAMQP converts an application property value to a type go-amqp
// encodes. A time.Duration travels as int64 milliseconds (AMQP has no
// duration type); UUIDs as AMQP uuid.
func propertyToAMQP(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, []byte:
		return x, nil
	case int:
		return int64(x), nil
	case uint:
		return uint64(x), nil
	case time.Time:
		return x.UTC(), nil
	case time.Duration:
		return x.Milliseconds(), nil
	case uuid.UUID:
		return amqp.UUID(x), nil
	case broker.LockToken:
		return amqp.UUID(x), nil
	case amqp.UUID:
		return x, nil
	}
	return nil, fmt.Errorf("values of type %T cannot travel over AMQP", v)
}

// received converts a message that arrived on a receiver link: fromAMQP,
// with a delivery count of at least 1, since it is being delivered now.
func received(raw *amqp.Message) *broker.Message {
	m := fromAMQP(raw)
	m.DeliveryCount = max(m.DeliveryCount, 1)
	return m
}

// fromAMQP converts a received or peeked message. Values of application
// properties keep go-amqp's types, except that AMQP uuids become uuid.UUID.
// Size is broker.MessageSize, as the embedded broker counts it.
func fromAMQP(in *amqp.Message) *broker.Message {
	m := &broker.Message{}
	if p := in.Properties; p != nil {
		m.MessageID = idString(p.MessageID)
		m.CorrelationID = idString(p.CorrelationID)
		m.ContentType = deref(p.ContentType)
		m.Subject = deref(p.Subject)
		m.To = deref(p.To)
		m.ReplyTo = deref(p.ReplyTo)
		m.ReplyToSessionID = deref(p.ReplyToGroupID)
		m.SessionID = deref(p.GroupID)
		m.SessionIDSet = p.GroupID != nil && *p.GroupID == ""
		if p.AbsoluteExpiryTime != nil && !p.AbsoluteExpiryTime.IsZero() {
			m.ExpiresAt = p.AbsoluteExpiryTime.UTC()
		}
	}
	// DeliveryCount follows the Service Bus SDKs: header delivery-count + 1
	// when there is a header. Receive raises a missing one to 1 (the
	// current delivery); a peeked message without a header was never
	// delivered.
	if h := in.Header; h != nil {
		m.TimeToLive = h.TTL
		m.DeliveryCount = h.DeliveryCount + 1
	}
	a := in.Annotations
	m.SequenceNumber = annInt64(a[sbamqp.AnnotSequenceNumber])
	m.EnqueuedSequenceNumber = annInt64(a[sbamqp.AnnotEnqueueSequenceNumber])
	m.EnqueuedTime = annTime(a[sbamqp.AnnotEnqueuedTime])
	m.LockedUntil = annTime(a[sbamqp.AnnotLockedUntil])
	m.ScheduledEnqueueTime = annTime(a[sbamqp.AnnotScheduledEnqueueTime])
	m.PartitionKey, _ = a[sbamqp.AnnotPartitionKey].(string)
	m.ViaPartitionKey, _ = a[sbamqp.AnnotViaPartitionKey].(string)
	m.DeadLetterSource, _ = a[sbamqp.AnnotDeadLetterSource].(string)
	switch annInt64(a[sbamqp.AnnotMessageState]) {
	case 1:
		m.State = broker.StateDeferred
	case 2:
		m.State = broker.StateScheduled
	}
	if m.ExpiresAt.IsZero() && !m.EnqueuedTime.IsZero() && m.TimeToLive > 0 && m.TimeToLive < broker.MaxTimeToLive {
		m.ExpiresAt = m.EnqueuedTime.Add(m.TimeToLive)
	}
	if len(in.ApplicationProperties) > 0 {
		m.ApplicationProperties = make(map[string]any, len(in.ApplicationProperties))
		for k, v := range in.ApplicationProperties {
			switch x := v.(type) {
			case amqp.UUID:
				v = uuid.UUID(x)
			case time.Time:
				v = x.UTC()
			}
			m.ApplicationProperties[k] = v
		}
	}
	switch {
	case in.Value != nil:
		m.BodyKind = broker.BodyValue
		m.Body, _ = (&amqp.Message{Value: in.Value}).MarshalBinary()
	case in.Sequence != nil:
		m.BodyKind = broker.BodySequence
		m.Body, _ = (&amqp.Message{Sequence: in.Sequence}).MarshalBinary()
	default:
		m.BodyKind = broker.BodyData
		if len(in.Data) == 1 {
			m.Body = in.Data[0]
		} else {
			m.SetSections(in.Data) // joined, the section lengths kept
		}
	}
	m.LockToken = lockTokenOf(in)
	m.Size = broker.MessageSize(m)
	return m
}

// lockTokenOf returns the lock token of a message: the delivery annotation
// x-opt-lock-token when present, else the 16-byte delivery tag, which
// carries the token in .NET GUID byte order.
func lockTokenOf(in *amqp.Message) broker.LockToken {
	if u, ok := in.DeliveryAnnotations[sbamqp.AnnotLockToken].(amqp.UUID); ok {
		return broker.LockToken(u)
	}
	if len(in.DeliveryTag) == 16 {
		return tokenFromTag(in.DeliveryTag)
	}
	return broker.LockToken{}
}

// tokenFromTag converts a delivery tag in .NET GUID byte order (the first
// three groups little-endian) to an RFC 4122 lock token.
func tokenFromTag(tag []byte) broker.LockToken {
	var t broker.LockToken
	copy(t[:], tag)
	t[0], t[1], t[2], t[3] = t[3], t[2], t[1], t[0]
	t[4], t[5] = t[5], t[4]
	t[6], t[7] = t[7], t[6]
	return t
}

// idString renders a message-id or correlation-id of any AMQP id type.
func idString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case amqp.UUID:
		return uuid.UUID(x).String()
	case []byte:
		return hex.EncodeToString(x)
	}
	return fmt.Sprint(v)
}

func annInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint64:
		return int64(x)
	case uint32:
		return int64(x)
	case uint16:
		return int64(x)
	case uint8:
		return int64(x)
	case int:
		return int64(x)
	}
	return 0
}

func annTime(v any) time.Time {
	switch x := v.(type) {
	case time.Time:
		return x.UTC()
	case *time.Time:
		if x != nil {
			return x.UTC()
		}
	}
	return time.Time{}
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
