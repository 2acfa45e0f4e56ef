package wire

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// DecodeMessage decodes an encoded AMQP message (the payload of its
// transfers) into a broker.Message. It reads every section: header (ttl,
// delivery-count; DeliveryCount is the header value plus one when the
// header carries one), delivery annotations (x-opt-lock-token), message
// annotations (the Service Bus broker properties; see nullIgnored for null
// values), properties (a group-id that is the empty string sets
// SessionIDSet: the empty session), application properties, and the body:
// data sections concatenated (with their lengths in DataSections when there
// are several), or the amqp-value or amqp-sequence sections kept encoded in
// Body. What Service Bus passes through without interpreting goes to AMQP
// (broker.Passthrough): the header's durable and priority, the delivery and
// message annotations that are not its own, and the footer.
// Size is the encoded size.
//
// Message ids and correlation ids of type uuid, ulong or binary become
// their text (canonical UUID, decimal, lower-case hex). Application
// property values keep their types, except that uuid becomes uuid.UUID,
// symbol and char become string, and the .NET described types
// com.microsoft:timespan, datetime-offset and uri become time.Duration,
// time.Time and string. Lists, maps, arrays and decimals are refused, as
// Service Bus allows only simple types there.
//
// The result shares no memory with b. Errors are *broker.Error with
// CodeInvalid wrapping a *DecodeError (errors.Is ErrDecode).
func DecodeMessage(b []byte) (*broker.Message, error) {
	return decodeMessage(b, true)
}

// DecodeOwnedMessage is DecodeMessage for bytes that the caller hands over:
// the binary values of the result (the body of a single data section, the
// sections passed through) alias b instead of being copied, so b must not
// change afterwards. A listener decodes each message it stores this way,
// from the payload it reassembled for it (with a MessageDecoder): a copy
// less of every message.
func DecodeOwnedMessage(b []byte) (*broker.Message, error) {
	return decodeMessage(b, false)
}

// decodeMessage is DecodeMessage, copying binary values out of b or not.
func decodeMessage(b []byte, copyBytes bool) (*broker.Message, error) {
	var d Decoder
	return decodeMessageWith(&d, b, copyBytes)
}

// decodeMessageWith is decodeMessage with the decoder d (which escapes to
// the heap: the readers of composite fields are called through function
// values).
func decodeMessageWith(d *Decoder, b []byte, copyBytes bool) (*broker.Message, error) {
	m := &broker.Message{Size: int64(len(b))}
	*d = Decoder{buf: b, copyBytes: copyBytes}
	err := d.readMessage(m)
	*d = Decoder{}
	if err != nil {
		return nil, &broker.Error{Code: broker.CodeInvalid, Message: "malformed AMQP message: " + err.Error(), Err: err}
	}
	return m, nil
}

// A MessageDecoder decodes one message after another with the same
// decoder, so that a message costs only the allocations of what it keeps.
// The zero value is ready; it is not safe for concurrent use and holds no
// bytes of a message between calls.
type MessageDecoder struct {
	d Decoder
}

// DecodeOwned is DecodeOwnedMessage.
func (md *MessageDecoder) DecodeOwned(b []byte) (*broker.Message, error) {
	return decodeMessageWith(&md.d, b, false)
}

// messageReader tracks what the sections seen so far established.
type messageReader struct {
	m            *broker.Message
	bodyKinds    int   // sections of the body seen
	dataSections int   // data sections seen
	firstDataLen int   // the length of the first
	dataLens     []int // the lengths of all, once there are two
	pass         broker.Passthrough
	deliveryAn   entryCollector // delivery annotations passed through
	messageAn    entryCollector // message annotations passed through
	hasValue     bool
	ttlHeader    bool
	absExpiry    time.Time
	created      time.Time
	expirySeen   bool
}

func (d *Decoder) readMessage(m *broker.Message) error {
	r := messageReader{m: m}
	for d.Len() > 0 {
		start := d.off
		code, sym, err := d.ReadDescriptor()
		if err != nil {
			return err
		}
		if sym != "" {
			d.off = start
			return d.errorf("unknown message section %s", sym)
		}
		valueStart := d.off
		switch code {
		case descHeader:
			d.off = start
			err = r.readHeader(d)
		case descDeliveryAnnotations:
			err = r.readDeliveryAnnotations(d)
		case descMessageAnnotations:
			err = r.readMessageAnnotations(d)
		case descProperties:
			d.off = start
			err = r.readProperties(d)
		case descApplicationProperties:
			err = r.readApplicationProperties(d)
		case descData:
			err = r.bodySection(d, broker.BodyData)
			if err == nil {
				var data []byte
				if data, err = d.ReadBinary(); err == nil {
					r.dataSections++
					switch r.dataSections {
					case 1: // most messages: no list of lengths
						r.firstDataLen = len(data)
					case 2:
						r.dataLens = append(r.dataLens, r.firstDataLen, len(data))
					default:
						r.dataLens = append(r.dataLens, len(data))
					}
					if m.Body == nil {
						m.Body = data // already a copy
					} else {
						m.Body = append(m.Body, data...)
					}
				}
			}
		case descAMQPSequence:
			if err = r.bodySection(d, broker.BodySequence); err == nil {
				if _, err = d.ReadList(); err == nil {
					m.Body = AppendDescriptor(m.Body, descAMQPSequence)
					m.Body = append(m.Body, d.buf[valueStart:d.off]...)
				}
			}
		case descAMQPValue:
			if r.hasValue {
				d.off = start
				return d.errorf("more than one amqp-value section")
			}
			r.hasValue = true
			if err = r.bodySection(d, broker.BodyValue); err == nil {
				if _, err = d.ReadAny(); err == nil {
					m.Body = AppendDescriptor(m.Body, descAMQPValue)
					m.Body = append(m.Body, d.buf[valueStart:d.off]...)
				}
			}
		case descFooter:
			if _, err = d.ReadMap(); err == nil {
				if raw := d.buf[valueStart:d.off]; len(raw) > 0 {
					if _, _, ok := mapEntries(raw); ok {
						r.pass.Footer = append([]byte(nil), raw...)
					}
				}
			}
		default:
			d.off = start
			return d.errorf("unknown message section %s", descriptorName(code, ""))
		}
		if err != nil {
			return err
		}
	}
	if len(r.dataLens) > 1 {
		m.DataSections = r.dataLens
	}
	r.pass.DeliveryAnnotations = r.deliveryAn.encoded()
	r.pass.MessageAnnotations = r.messageAn.encoded()
	if !r.pass.IsZero() {
		if p := sharedPassthrough(&r.pass); p != nil {
			m.AMQP = p
		} else {
			pass := r.pass // r stays on the stack: most messages have nothing to pass through
			m.AMQP = &pass
		}
	}
	// Without a header ttl, or with the longest one it holds (a longer time
	// to live is sent so), the absolute-expiry-time minus the creation-time
	// is the time to live.
	if (!r.ttlHeader || m.TimeToLive == maxHeaderTTL) && r.expirySeen && !r.created.IsZero() && r.absExpiry.After(r.created) {
		if d := r.absExpiry.Sub(r.created); !r.ttlHeader || d > m.TimeToLive {
			m.TimeToLive = d
		}
	}
	return nil
}

// headerPassthroughs are the passthroughs of the messages that pass
// through nothing but their header's durable flag and a priority up to 9
// (or none), by durable and priority + 1 (0: none). go-amqp writes the
// priority of every header it sends (0 unless set), so most messages of
// generic AMQP clients have one of these; they share it instead of
// allocating and keeping their own. Nothing changes a decoded message's
// Passthrough in place (a message's copy clones it).
var headerPassthroughs = func() (t [2][11]broker.Passthrough) {
	for d := range t {
		for p := range t[d] {
			t[d][p] = broker.Passthrough{Durable: d == 1, HasPriority: p > 0, Priority: uint8(max(p-1, 0))}
		}
	}
	return t
}()

// sharedPassthrough returns the entry of headerPassthroughs equal to p, or
// nil when there is none.
func sharedPassthrough(p *broker.Passthrough) *broker.Passthrough {
	if p.ContentEncoding != "" || p.DeliveryAnnotations != nil || p.MessageAnnotations != nil || p.Footer != nil ||
		(p.HasPriority && p.Priority > 9) || (!p.HasPriority && p.Priority != 0) {
		return nil
	}
	d, i := 0, 0
	if p.Durable {
		d = 1
	}
	if p.HasPriority {
		i = int(p.Priority) + 1
	}
	return &headerPassthroughs[d][i]
}

// bodySection checks that a body section agrees with the ones before it.
func (r *messageReader) bodySection(d *Decoder, kind broker.BodyKind) error {
	if r.bodyKinds > 0 && r.m.BodyKind != kind {
		return d.errorf("%s section after %s sections", kind, r.m.BodyKind)
	}
	r.bodyKinds++
	r.m.BodyKind = kind
	return nil
}

func (r *messageReader) readHeader(d *Decoder) error {
	f, err := d.readComposite(descHeader)
	if err != nil {
		return err
	}
	var durable, firstAcquirer bool
	var priority uint8
	var ttl, dc uint32
	field(&f, &durable, (*Decoder).ReadBool)
	r.pass.Durable = durable
	if field(&f, &priority, (*Decoder).ReadUbyte) {
		r.pass.Priority, r.pass.HasPriority = priority, true
	}
	if field(&f, &ttl, (*Decoder).ReadUint) {
		r.ttlHeader = true
		r.m.TimeToLive = time.Duration(ttl) * time.Millisecond
	}
	field(&f, &firstAcquirer, (*Decoder).ReadBool)
	if field(&f, &dc, (*Decoder).ReadUint) {
		r.m.DeliveryCount = dc + 1
		if dc == 1<<32-1 {
			r.m.DeliveryCount = dc
		}
	}
	return f.finish()
}

// forEachEntry reads a map entry by entry: fn gets the bytes and the
// constructor of a string or symbol key (code 0 for other keys, which are
// skipped) with the decoder at the value, and must consume the value.
func (d *Decoder) forEachEntry(fn func(key []byte, code byte) error) error {
	pairs, end, err := d.readMapHeader()
	if err != nil {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	outer := d.bound(end)
	for range pairs {
		var key []byte
		var code byte
		if key, code, err = d.readKeyBytes(); err != nil {
			break
		}
		if code == 0 {
			if err = d.Skip(); err != nil {
				break
			}
		}
		if err = fn(key, code); err != nil {
			break
		}
	}
	return d.unbound(outer, end, "map", err)
}

func (r *messageReader) readDeliveryAnnotations(d *Decoder) error {
	return d.forEachEntry(func(key []byte, code byte) error {
		if string(key) == string(AnnotLockToken) {
			if d.off < len(d.buf) && d.buf[d.off] == codeUUID {
				u, err := d.ReadUUID()
				r.m.LockToken = broker.LockToken(u)
				return err
			}
			return d.Skip()
		}
		return r.deliveryAn.collectEntry(d, key, code)
	})
}

func (r *messageReader) readMessageAnnotations(d *Decoder) error {
	m := r.m
	return d.forEachEntry(func(key []byte, code byte) error {
		if nullIgnored(key) && d.PeekNull() { // consumes the null
			return nil
		}
		start := d.off
		var err error
		switch string(key) {
		case string(AnnotSequenceNumber):
			m.SequenceNumber, err = d.ReadLong()
		case string(AnnotEnqueueSequenceNumber):
			m.EnqueuedSequenceNumber, err = d.ReadLong()
		case string(AnnotEnqueuedTime):
			m.EnqueuedTime, err = d.ReadTimestamp()
		case string(AnnotLockedUntil):
			m.LockedUntil, err = d.ReadTimestamp()
		case string(AnnotScheduledEnqueueTime):
			m.ScheduledEnqueueTime, err = d.ReadTimestamp()
		case string(AnnotPartitionKey):
			m.PartitionKey, err = d.readOptionalString()
		case string(AnnotViaPartitionKey):
			m.ViaPartitionKey, err = d.readOptionalString()
		case string(AnnotDeadLetterSource):
			m.DeadLetterSource, err = d.readOptionalString()
		case string(AnnotMessageState):
			var s int64
			if s, err = d.ReadLong(); err == nil && (s < 0 || s > int64(broker.StateScheduled)) {
				d.off = start
				return d.errorf("message annotation %s has value %d: want 0, 1 or 2", key, s)
			}
			m.State = broker.State(s)
		default:
			return r.messageAn.collectEntry(d, key, code)
		}
		if err != nil { // the prefix is built only for an error: keys are read for every message
			return prefixError(err, "message annotation "+string(key)+": ")
		}
		return nil
	})
}

// nullIgnored reports whether a null value of a message annotation is
// ignored: the broker-owned annotations that Service Bus overwrites when it
// stores a message (the Go SDK's TestNilPartitionKey sends them as null and
// expects the send to succeed). A null scheduled enqueue time, enqueue
// sequence number or message state is refused, as Service Bus refuses it;
// a null partition key, via-partition key or dead-letter source reads as
// none.
func nullIgnored(key []byte) bool {
	switch string(key) {
	case string(AnnotSequenceNumber), string(AnnotEnqueuedTime), string(AnnotLockedUntil):
		return true
	}
	return false
}

// prefixError puts prefix before the message of a *DecodeError.
func prefixError(err error, prefix string) error {
	if de, ok := err.(*DecodeError); ok {
		return &DecodeError{Offset: de.Offset, Msg: prefix + de.Msg}
	}
	return err
}

// readOptionalString reads a string, a symbol, or null (as empty).
func (d *Decoder) readOptionalString() (string, error) {
	if d.PeekNull() {
		return "", nil
	}
	return d.ReadString()
}

func (r *messageReader) readProperties(d *Decoder) error {
	f, err := d.readComposite(descProperties)
	if err != nil {
		return err
	}
	m := r.m
	var userID []byte
	var contentType, contentEncoding Symbol
	var groupSequence uint32
	field(&f, &m.MessageID, readMessageID)
	field(&f, &userID, (*Decoder).ReadBinary)
	field(&f, &m.To, readAddress)
	field(&f, &m.Subject, (*Decoder).ReadString)
	field(&f, &m.ReplyTo, readAddress)
	field(&f, &m.CorrelationID, readMessageID)
	field(&f, &contentType, (*Decoder).ReadSymbol)
	field(&f, &contentEncoding, (*Decoder).ReadSymbol)
	if field(&f, &r.absExpiry, (*Decoder).ReadTimestamp) {
		r.expirySeen = true
		m.ExpiresAt = r.absExpiry
	}
	field(&f, &r.created, (*Decoder).ReadTimestamp)
	if field(&f, &m.SessionID, (*Decoder).ReadString) && m.SessionID == "" {
		m.SessionIDSet = true // group-id "": the empty session, not none
	}
	field(&f, &groupSequence, (*Decoder).ReadUint)
	field(&f, &m.ReplyToSessionID, (*Decoder).ReadString)
	if err := f.finish(); err != nil {
		return err
	}
	m.ContentType = string(contentType)
	r.pass.ContentEncoding = string(contentEncoding)
	return nil
}

// readMessageID reads a message-id or correlation-id as text.
func readMessageID(d *Decoder) (string, error) {
	start := d.off
	if d.off < len(d.buf) {
		switch d.buf[d.off] {
		case codeStr8, codeStr32:
			return d.ReadString()
		}
	}
	v, err := d.ReadAny()
	if err != nil {
		return "", err
	}
	s, err := idString(v)
	if err != nil {
		d.off = start
		return "", d.errorf("%v", err)
	}
	return s, nil
}

// idString returns the text form of a message-id or correlation-id.
func idString(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case Symbol:
		return string(v), nil
	case UUID:
		return v.String(), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case []byte:
		return hex.EncodeToString(v), nil
	}
	return "", fmt.Errorf("message id of type %s: want string, uuid, ulong or binary", amqpTypeName(v))
}

func (r *messageReader) readApplicationProperties(d *Decoder) error {
	if r.m.ApplicationProperties == nil {
		r.m.ApplicationProperties = make(map[string]any)
	}
	return d.forEachEntry(func(key []byte, code byte) error {
		switch code {
		case codeStr8, codeStr32:
		case codeSym8, codeSym32:
			return d.errorf("application property key %q is a symbol: want a string", key)
		default:
			return d.errorf("application property key is not a string")
		}
		start := d.off
		v, err := d.ReadAny()
		if err != nil {
			return err
		}
		if v, err = propertyValue(v); err != nil {
			d.off = start
			return d.errorf("application property %q: %v", key, err)
		}
		r.m.ApplicationProperties[string(key)] = v
		return nil
	})
}

// propertyValue converts a decoded application property value to the
// types broker.Message documents.
func propertyValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, uint8, uint16, uint32, uint64, int8, int16, int32, int64,
		float32, float64, string, []byte, time.Time:
		return v, nil
	case UUID:
		return uuid.UUID(v), nil
	case Symbol:
		return string(v), nil
	case Char:
		return v.String(), nil
	case Described:
		return describedProperty(v)
	}
	return nil, fmt.Errorf("values of type %s are not allowed (simple types only)", amqpTypeName(v))
}

// describedProperty converts the described types the .NET SDKs put in
// application properties.
func describedProperty(v Described) (any, error) {
	sym, _ := v.Descriptor.(Symbol)
	switch sym {
	case symTimeSpan:
		if ticks, ok := asInt64(v.Value); ok {
			return time.Duration(ticks) * 100, nil
		}
	case symDateTimeOffset:
		if ticks, ok := asInt64(v.Value); ok {
			t := ticks - sbamqp.DotNetEpochTicks
			return time.Unix(t/1e7, t%1e7*100).UTC(), nil
		}
	case symURI:
		if s, ok := v.Value.(string); ok {
			return s, nil
		}
	default:
		return nil, fmt.Errorf("described type %v is not supported", v.Descriptor)
	}
	return nil, fmt.Errorf("described type %v with a %T value", v.Descriptor, v.Value)
}

// amqpTypeName names the AMQP type of a decoded value for error messages.
func amqpTypeName(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case Map:
		return "map"
	case Array, []Symbol, []string, []UUID, []int64, []int32, []int16, []int8, []uint64,
		[]uint32, []uint16, []bool, []float32, []float64, []time.Time, [][]byte, []Map:
		return "array"
	case Decimal32:
		return "decimal32"
	case Decimal64:
		return "decimal64"
	case Decimal128:
		return "decimal128"
	}
	return fmt.Sprintf("%T", v)
}
