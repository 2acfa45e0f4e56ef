package wire

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// Service Bus annotation keys as symbols; the names are package sbamqp's.
const (
	AnnotSequenceNumber        Symbol = sbamqp.AnnotSequenceNumber
	AnnotEnqueueSequenceNumber Symbol = sbamqp.AnnotEnqueueSequenceNumber
	AnnotEnqueuedTime          Symbol = sbamqp.AnnotEnqueuedTime
	AnnotLockedUntil           Symbol = sbamqp.AnnotLockedUntil
	AnnotScheduledEnqueueTime  Symbol = sbamqp.AnnotScheduledEnqueueTime
	AnnotPartitionKey          Symbol = sbamqp.AnnotPartitionKey
	AnnotViaPartitionKey       Symbol = sbamqp.AnnotViaPartitionKey
	AnnotDeadLetterSource      Symbol = sbamqp.AnnotDeadLetterSource
	AnnotMessageState          Symbol = sbamqp.AnnotMessageState
	// AnnotLockToken is a delivery annotation.
	AnnotLockToken Symbol = sbamqp.AnnotLockToken
)

// MessageFormatBatch is the message format of a Service Bus batch: one
// encoded message per data section.
const MessageFormatBatch uint32 = 0x80013700

// EncodeOptions says how EncodeMessage presents a message to a receiver.
type EncodeOptions struct {
	// LockToken adds the delivery annotation x-opt-lock-token carrying
	// m.LockToken (the delivery's, for EncodeDelivery), as
	// receive-by-sequence-number responses need.
	LockToken bool
	// DeliveryCount writes the header delivery-count as
	// m.DeliveryCount-1 (the delivery's, for EncodeDelivery; the SDKs add
	// one back); a message with
	// DeliveryCount 0 gets no delivery count. Without it, as a sender
	// writes a message, the header has no delivery count.
	DeliveryCount bool
	// CorrelationID, when set, is an encoded AMQP value (EncodedPropertiesField)
	// written as the correlation-id in place of m.CorrelationID: a response
	// echoes its request's message-id with that id's own type.
	CorrelationID []byte
}

// EncodeMessage appends m as an AMQP message: header (durable, priority,
// ttl, first-acquirer, delivery count), delivery annotations (lock token, on request),
// message annotations (the Service Bus broker properties that are set),
// properties, application properties, the body and the footer; the
// delivery and message annotations and the footer that a sender gave the
// message (m.AMQP) follow ours. A BodyData body is one data section, or the
// sections DataSections describes (see broker.Message.Sections); BodyValue
// and BodySequence bodies are written as the encoded sections they hold.
//
// Application property values outside the value model that no Go type
// rule encodes are written as their fmt.Sprint text, so encoding never
// fails.
func EncodeMessage(dst []byte, m *broker.Message, opts EncodeOptions) []byte {
	d := broker.DeliveryOf(m)
	return EncodeDelivery(dst, &d, opts)
}

// EncodeDelivery is EncodeMessage for a delivery of a stored message,
// without a copy of it: the message is d.Msg, with d's sequence number,
// delivery count, state and lock in place of its own. It encodes the same
// bytes as EncodeMessage of d.Message().
func EncodeDelivery(dst []byte, d *broker.Delivery, opts EncodeOptions) []byte {
	m := d.Msg
	dst = slices.Grow(dst, encodedSizeHint(m)) // one allocation, not one per section
	dst = appendHeader(dst, d, opts)
	dst = appendDeliveryAnnotations(dst, d, opts)
	dst = appendMessageAnnotations(dst, d)
	dst = appendProperties(dst, m, opts.CorrelationID)
	dst = appendApplicationProperties(dst, m.ApplicationProperties)
	dst = appendBody(dst, m)
	return appendFooter(dst, m)
}

// encodedSizeHint returns about how many bytes EncodeMessage writes for m,
// cheaply and rather more than fewer: the body, and room for the sections
// around it.
func encodedSizeHint(m *broker.Message) int {
	return len(m.Body) + 512 + 64*len(m.ApplicationProperties)
}

// passedThrough returns the entries of one of m's passthrough maps (see
// mapEntries); pick chooses the map.
func passedThrough(m *broker.Message, pick func(*broker.Passthrough) []byte) ([]byte, int) {
	if m.AMQP == nil {
		return nil, 0
	}
	entries, pairs, ok := mapEntries(pick(m.AMQP))
	if !ok {
		return nil, 0
	}
	return entries, pairs
}

func appendDeliveryAnnotations(b []byte, d *broker.Delivery, opts EncodeOptions) []byte {
	entries, pairs := passedThrough(d.Msg, func(p *broker.Passthrough) []byte { return p.DeliveryAnnotations })
	if !opts.LockToken && pairs == 0 {
		return b
	}
	b = AppendDescriptor(b, descDeliveryAnnotations)
	b, start := beginCompound(b, codeMap32)
	n := pairs
	if opts.LockToken {
		b = AppendUUID(AppendSymbol(b, AnnotLockToken), UUID(d.LockToken))
		n++
	}
	b = append(b, entries...)
	return endCompound(b, start, 2*n, codeMap8, codeMap32)
}

// appendFooter writes the footer a sender gave the message, if any.
func appendFooter(b []byte, m *broker.Message) []byte {
	if m.AMQP == nil || m.AMQP.Footer == nil {
		return b
	}
	if _, _, ok := mapEntries(m.AMQP.Footer); !ok {
		return b
	}
	return append(AppendDescriptor(b, descFooter), m.AMQP.Footer...)
}

// maxHeaderTTL is the longest time to live the header's ttl (uint
// milliseconds) holds. A longer one is sent as this, with the
// absolute-expiry-time (minus the creation-time) saying the real one, as
// Service Bus and its SDKs do.
const maxHeaderTTL = math.MaxUint32 * time.Millisecond

// ttlMillis returns the header ttl for d, and false when d is not positive
// or does not fit the header's uint milliseconds.
func ttlMillis(d time.Duration) (uint32, bool) {
	ms := d.Milliseconds()
	if d <= 0 || ms > math.MaxUint32 {
		return 0, false
	}
	return uint32(ms), true
}

// headerTTL returns the header ttl of m: its time to live in milliseconds,
// capped at the most the field holds when m has an expiry time (which
// appendProperties writes as the absolute-expiry-time, and its enqueued
// time as the creation-time, the difference being the real time to live).
// A message that never expires gets no ttl.
func headerTTL(m *broker.Message) (uint32, bool) {
	if ms, ok := ttlMillis(m.TimeToLive); ok {
		return ms, true
	}
	if m.TimeToLive > maxHeaderTTL && !m.ExpiresAt.IsZero() && !m.EnqueuedTime.IsZero() {
		return math.MaxUint32, true
	}
	return 0, false
}

func appendHeader(b []byte, d *broker.Delivery, opts EncodeOptions) []byte {
	m := d.Msg
	ttl, hasTTL := headerTTL(m)
	hasDC := opts.DeliveryCount && d.DeliveryCount > 0
	var pass broker.Passthrough
	if m.AMQP != nil {
		pass = *m.AMQP
	}
	if !hasTTL && !hasDC && !pass.Durable && !pass.HasPriority {
		return b
	}
	b, c := beginComposite(b, descHeader)
	b = c.boolean(b, pass.Durable, true)
	b = c.ubyte(b, pass.Priority, pass.HasPriority)
	b = c.uint(b, ttl, hasTTL)
	b = c.boolean(b, false, true) // first-acquirer: Service Bus always sends false
	var dc uint32
	if hasDC {
		dc = d.DeliveryCount - 1
	}
	b = c.uint(b, dc, hasDC)
	return c.end(b)
}

// appendMessageAnnotations writes the Service Bus annotations that are set,
// and then those a sender gave the message. An active message has no
// x-opt-message-state, as Service Bus sends it: receivers take its absence
// for active.
func appendMessageAnnotations(b []byte, d *broker.Delivery) []byte {
	m := d.Msg
	entries, pairs := passedThrough(m, func(p *broker.Passthrough) []byte { return p.MessageAnnotations })
	if d.SequenceNumber == 0 && d.State == broker.StateActive && m.EnqueuedSequenceNumber == 0 && m.EnqueuedTime.IsZero() &&
		d.LockedUntil.IsZero() && m.ScheduledEnqueueTime.IsZero() && m.PartitionKey == "" &&
		m.ViaPartitionKey == "" && m.DeadLetterSource == "" && pairs == 0 {
		return b
	}
	b = AppendDescriptor(b, descMessageAnnotations)
	b, start := beginCompound(b, codeMap32)
	n := pairs
	if d.SequenceNumber != 0 {
		b = AppendLong(AppendSymbol(b, AnnotSequenceNumber), d.SequenceNumber)
		n++
	}
	if m.EnqueuedSequenceNumber != 0 {
		b = AppendLong(AppendSymbol(b, AnnotEnqueueSequenceNumber), m.EnqueuedSequenceNumber)
		n++
	}
	if !m.EnqueuedTime.IsZero() {
		b = AppendTimestamp(AppendSymbol(b, AnnotEnqueuedTime), m.EnqueuedTime)
		n++
	}
	if !d.LockedUntil.IsZero() {
		b = AppendTimestamp(AppendSymbol(b, AnnotLockedUntil), d.LockedUntil)
		n++
	}
	if !m.ScheduledEnqueueTime.IsZero() {
		b = AppendTimestamp(AppendSymbol(b, AnnotScheduledEnqueueTime), m.ScheduledEnqueueTime)
		n++
	}
	if m.PartitionKey != "" {
		b = AppendString(AppendSymbol(b, AnnotPartitionKey), m.PartitionKey)
		n++
	}
	if m.ViaPartitionKey != "" {
		b = AppendString(AppendSymbol(b, AnnotViaPartitionKey), m.ViaPartitionKey)
		n++
	}
	if m.DeadLetterSource != "" {
		b = AppendString(AppendSymbol(b, AnnotDeadLetterSource), m.DeadLetterSource)
		n++
	}
	if d.State != broker.StateActive {
		b = AppendInt(AppendSymbol(b, AnnotMessageState), int32(d.State))
		n++
	}
	b = append(b, entries...)
	return endCompound(b, start, 2*n, codeMap8, codeMap32)
}

// appendProperties writes the properties section. It is always written:
// the Go SDK reads the header delivery count only when properties exist.
// A correlationID given encoded replaces m.CorrelationID.
func appendProperties(b []byte, m *broker.Message, correlationID []byte) []byte {
	b, c := beginComposite(b, descProperties)
	b = c.str(b, m.MessageID, m.MessageID != "")
	b = c.null(b) // user-id
	b = c.str(b, m.To, m.To != "")
	b = c.str(b, m.Subject, m.Subject != "")
	b = c.str(b, m.ReplyTo, m.ReplyTo != "")
	if correlationID != nil {
		b = c.raw(b, correlationID)
	} else {
		b = c.str(b, m.CorrelationID, m.CorrelationID != "")
	}
	b = c.symbol(b, Symbol(m.ContentType), m.ContentType != "")
	if m.AMQP != nil && m.AMQP.ContentEncoding != "" {
		b = c.symbol(b, Symbol(m.AMQP.ContentEncoding), true)
	} else {
		b = c.null(b) // content-encoding
	}
	expires := !m.ExpiresAt.IsZero()
	b = c.timestamp(b, m.ExpiresAt, expires)
	b = c.timestamp(b, m.EnqueuedTime, expires && !m.EnqueuedTime.IsZero())
	b = c.str(b, m.SessionID, m.HasSessionID())
	b = c.null(b) // group-sequence
	b = c.str(b, m.ReplyToSessionID, m.ReplyToSessionID != "")
	return c.end(b)
}

// appendApplicationProperties writes the application properties in sorted
// key order; nil or empty properties write no section.
func appendApplicationProperties(b []byte, props map[string]any) []byte {
	if len(props) == 0 {
		return b
	}
	var stack [16]string
	keys := stack[:0]
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = AppendDescriptor(b, descApplicationProperties)
	b, start := beginCompound(b, codeMap32)
	for _, k := range keys {
		b = AppendString(b, k)
		b = appendPropertyValue(b, props[k])
	}
	return endCompound(b, start, 2*len(keys), codeMap8, codeMap32)
}

// appendPropertyValue writes one application property value; what cannot
// be encoded becomes its text.
func appendPropertyValue(b []byte, v any) []byte {
	nb, err := AppendValue(b, v)
	if err != nil {
		return AppendString(b, fmt.Sprint(v))
	}
	return nb
}

func appendBody(b []byte, m *broker.Message) []byte {
	switch m.BodyKind {
	case broker.BodyValue:
		if len(m.Body) == 0 {
			return AppendNull(AppendDescriptor(b, descAMQPValue))
		}
		return append(b, m.Body...)
	case broker.BodySequence:
		if len(m.Body) == 0 {
			return append(AppendDescriptor(b, descAMQPSequence), codeList0)
		}
		return append(b, m.Body...)
	}
	if m.DataSections != nil {
		for _, sec := range m.Sections() {
			b = AppendBinary(AppendDescriptor(b, descData), sec)
		}
		return b
	}
	return AppendBinary(AppendDescriptor(b, descData), m.Body)
}
