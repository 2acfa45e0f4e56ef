package store

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// A message is written as a uvarint bitmap of the fields that are set,
// followed by those fields in bit order; unset fields cost nothing. The
// SessionID field is set whenever the message has a SessionId
// (HasSessionID): the empty session is written as an empty string.
//
// Message records have their own version, messageVersion: version 1 has the
// fields up to Size; version 2 adds DataSections (a uvarint count and then
// each length as a uvarint) and then AMQP, the passthrough (a flags byte:
// 1 durable, 2 has a priority; the priority byte; then the delivery
// annotations, message annotations and footer as nil-able byte slices),
// the last fields in bit order. Version 3 adds History, the first event of
// the message's history (see PutMessageWithHistory) as a byte slice holding
// its history event record, last in bit order; a message put without one
// is still written as version 2, so that a record needs version 3 only
// when it has the field. Every version is read; a version 1 record reads
// as a message whose body is one data section, with no passthrough.

// messageVersion is the first byte of an encoded message;
// messageVersionHistory that of one with a history event. Records of
// versions 1 to 3 are read.
const (
	messageVersion        = 2
	messageVersionHistory = 3
)

// Message field bits, in the order the fields are written.
const (
	fMessageID = 1 << iota
	fContentType
	fCorrelationID
	fSubject
	fTo
	fReplyTo
	fReplyToSessionID
	fSessionID
	fPartitionKey
	fViaPartitionKey
	fTimeToLive
	fScheduledEnqueueTime
	fApplicationProperties
	fBody
	fBodyKind
	fSequenceNumber
	fEnqueuedSequenceNumber
	fEnqueuedTime
	fExpiresAt
	fLockedUntil
	fLockToken
	fDeliveryCount
	fDeadLetterSource
	fState
	fSize
	fDataSections // version 2
	fAMQP         // version 2
	fHistory      // version 3

	fAllV1 = fSize<<1 - 1
	fAllV2 = fAMQP<<1 - 1
	fAll   = fHistory<<1 - 1
)

// Passthrough flags.
const (
	passDurable = 1 << iota
	passPriority
	passContentEncoding // a string after the footer
)

// appendMessage appends the encoding of m to dst and returns the extended
// slice. An application property of a type the codec does not know, or
// DataSections that do not describe the body, is a *broker.Error with
// CodeInvalid; dst is then returned unchanged.
func appendMessage(dst []byte, m *broker.Message) ([]byte, error) {
	return appendMessageRecord(dst, m, nil, nil)
}

// appendMessageRecord is appendMessage with the first event of the
// message's history kept in the record (nil: none), its actor by reference
// when refs is not nil (see appendHistoryEvent).
func appendMessageRecord(dst []byte, m *broker.Message, first *HistoryEvent, refs *actorRefs) ([]byte, error) {
	if err := checkProps(m.ApplicationProperties, "application property"); err != nil {
		return dst, err
	}
	if err := m.CheckDataSections(); err != nil {
		return dst, err
	}
	var bits uint64
	set := func(ok bool, bit uint64) {
		if ok {
			bits |= bit
		}
	}
	set(m.MessageID != "", fMessageID)
	set(m.ContentType != "", fContentType)
	set(m.CorrelationID != "", fCorrelationID)
	set(m.Subject != "", fSubject)
	set(m.To != "", fTo)
	set(m.ReplyTo != "", fReplyTo)
	set(m.ReplyToSessionID != "", fReplyToSessionID)
	set(m.HasSessionID(), fSessionID) // written even when "": the empty session
	set(m.PartitionKey != "", fPartitionKey)
	set(m.ViaPartitionKey != "", fViaPartitionKey)
	set(m.TimeToLive != 0, fTimeToLive)
	set(!m.ScheduledEnqueueTime.IsZero(), fScheduledEnqueueTime)
	set(m.ApplicationProperties != nil, fApplicationProperties)
	set(m.Body != nil, fBody)
	set(m.BodyKind != 0, fBodyKind)
	set(m.SequenceNumber != 0, fSequenceNumber)
	set(m.EnqueuedSequenceNumber != 0, fEnqueuedSequenceNumber)
	set(!m.EnqueuedTime.IsZero(), fEnqueuedTime)
	set(!m.ExpiresAt.IsZero(), fExpiresAt)
	set(!m.LockedUntil.IsZero(), fLockedUntil)
	set(!m.LockToken.IsZero(), fLockToken)
	set(m.DeliveryCount != 0, fDeliveryCount)
	set(m.DeadLetterSource != "", fDeadLetterSource)
	set(m.State != 0, fState)
	set(m.Size != 0, fSize)
	set(m.DataSections != nil, fDataSections)
	set(!m.AMQP.IsZero(), fAMQP)
	set(first != nil, fHistory)

	e := encoder{buf: dst}
	if first != nil {
		e.byte(messageVersionHistory)
	} else {
		e.byte(messageVersion)
	}
	e.uvarint(bits)
	strs := [...]struct {
		bit uint64
		s   string
	}{
		{fMessageID, m.MessageID}, {fContentType, m.ContentType}, {fCorrelationID, m.CorrelationID},
		{fSubject, m.Subject}, {fTo, m.To}, {fReplyTo, m.ReplyTo}, {fReplyToSessionID, m.ReplyToSessionID},
		{fSessionID, m.SessionID}, {fPartitionKey, m.PartitionKey}, {fViaPartitionKey, m.ViaPartitionKey},
	}
	for _, f := range strs {
		if bits&f.bit != 0 {
			e.string(f.s)
		}
	}
	if bits&fTimeToLive != 0 {
		e.varint(int64(m.TimeToLive))
	}
	if bits&fScheduledEnqueueTime != 0 {
		e.time(m.ScheduledEnqueueTime)
	}
	if bits&fApplicationProperties != 0 {
		e.props(m.ApplicationProperties)
	}
	if bits&fBody != 0 {
		e.bytes(m.Body)
	}
	if bits&fBodyKind != 0 {
		e.byte(byte(m.BodyKind))
	}
	if bits&fSequenceNumber != 0 {
		e.varint(m.SequenceNumber)
	}
	if bits&fEnqueuedSequenceNumber != 0 {
		e.varint(m.EnqueuedSequenceNumber)
	}
	if bits&fEnqueuedTime != 0 {
		e.time(m.EnqueuedTime)
	}
	if bits&fExpiresAt != 0 {
		e.time(m.ExpiresAt)
	}
	if bits&fLockedUntil != 0 {
		e.time(m.LockedUntil)
	}
	if bits&fLockToken != 0 {
		e.buf = append(e.buf, m.LockToken[:]...)
	}
	if bits&fDeliveryCount != 0 {
		e.uvarint(uint64(m.DeliveryCount))
	}
	if bits&fDeadLetterSource != 0 {
		e.string(m.DeadLetterSource)
	}
	if bits&fState != 0 {
		e.byte(byte(m.State))
	}
	if bits&fSize != 0 {
		e.varint(m.Size)
	}
	if bits&fDataSections != 0 {
		e.uvarint(uint64(len(m.DataSections)))
		for _, n := range m.DataSections {
			e.uvarint(uint64(n))
		}
	}
	if bits&fAMQP != 0 {
		p := m.AMQP
		var flags byte
		if p.Durable {
			flags |= passDurable
		}
		if p.HasPriority {
			flags |= passPriority
		}
		if p.ContentEncoding != "" {
			flags |= passContentEncoding
		}
		e.byte(flags)
		e.byte(p.Priority)
		e.nilBytes(p.DeliveryAnnotations)
		e.nilBytes(p.MessageAnnotations)
		e.nilBytes(p.Footer)
		if p.ContentEncoding != "" {
			e.string(p.ContentEncoding)
		}
	}
	if first != nil {
		// The event's length goes before it: it is encoded after a
		// placeholder byte, moved up when its length needs more.
		at := len(e.buf)
		e.buf = appendHistoryEvent(append(e.buf, 0), first, refs)
		n := len(e.buf) - at - 1
		var lb [binary.MaxVarintLen64]byte
		l := binary.PutUvarint(lb[:], uint64(n))
		if l > 1 {
			e.buf = append(e.buf, lb[:l-1]...)
			copy(e.buf[at+l:], e.buf[at+1:at+1+n])
		}
		copy(e.buf[at:], lb[:l])
	}
	return e.buf, nil
}

// decodeMessage decodes a message written by appendMessage. The result
// shares no memory with b. Times are in UTC. Bytes that are not a valid
// encoding give a *broker.Error whose Err is ErrCorrupt.
func decodeMessage(b []byte) (*broker.Message, error) {
	return decodeMessageRecord(b, nil)
}

// decodeMessageHistory returns the first history event kept in an encoded
// message (see appendMessageRecord), or nil when it keeps none; actor reads
// an actor kept by reference.
func decodeMessageHistory(b []byte, actor actorLookup) (*HistoryEvent, error) {
	var raw []byte
	if _, err := decodeMessageRecord(b, &raw); err != nil || raw == nil {
		return nil, err
	}
	ev, err := decodeHistoryEvent(raw, actor)
	if err != nil {
		return nil, err
	}
	return &ev, nil
}

// decodeMessageRecord is decodeMessage that also sets *hist, when not nil,
// to the encoded history event the record keeps (a subslice of b), if any.
func decodeMessageRecord(b []byte, hist *[]byte) (*broker.Message, error) {
	d := decoder{b: b, what: "message"}
	all := uint64(fAll)
	switch v := d.byte(); {
	case d.err != nil:
	case v == 1:
		all = fAllV1
	case v == 2:
		all = fAllV2
	case v != messageVersionHistory:
		d.fail("unknown message version %d", v)
	}
	bits := d.uvarint()
	if bits&^all != 0 {
		d.fail("unknown field bits %#x", bits&^all)
	}
	m := new(broker.Message)
	strs := [...]struct {
		bit uint64
		s   *string
	}{
		{fMessageID, &m.MessageID}, {fContentType, &m.ContentType}, {fCorrelationID, &m.CorrelationID},
		{fSubject, &m.Subject}, {fTo, &m.To}, {fReplyTo, &m.ReplyTo}, {fReplyToSessionID, &m.ReplyToSessionID},
		{fSessionID, &m.SessionID}, {fPartitionKey, &m.PartitionKey}, {fViaPartitionKey, &m.ViaPartitionKey},
	}
	for _, f := range strs {
		if bits&f.bit != 0 {
			*f.s = d.string()
		}
	}
	m.SessionIDSet = bits&fSessionID != 0 && m.SessionID == ""
	if bits&fTimeToLive != 0 {
		m.TimeToLive = time.Duration(d.varint())
	}
	if bits&fScheduledEnqueueTime != 0 {
		m.ScheduledEnqueueTime = d.time()
	}
	if bits&fApplicationProperties != 0 {
		m.ApplicationProperties = d.props()
	}
	if bits&fBody != 0 {
		m.Body = d.bytes()
		if m.Body == nil && d.err == nil {
			m.Body = []byte{}
		}
	}
	if bits&fBodyKind != 0 {
		m.BodyKind = broker.BodyKind(d.byte())
	}
	if bits&fSequenceNumber != 0 {
		m.SequenceNumber = d.varint()
	}
	if bits&fEnqueuedSequenceNumber != 0 {
		m.EnqueuedSequenceNumber = d.varint()
	}
	if bits&fEnqueuedTime != 0 {
		m.EnqueuedTime = d.time()
	}
	if bits&fExpiresAt != 0 {
		m.ExpiresAt = d.time()
	}
	if bits&fLockedUntil != 0 {
		m.LockedUntil = d.time()
	}
	if bits&fLockToken != 0 {
		copy(m.LockToken[:], d.fixed(16))
	}
	if bits&fDeliveryCount != 0 {
		m.DeliveryCount = d.uint32()
	}
	if bits&fDeadLetterSource != 0 {
		m.DeadLetterSource = d.string()
	}
	if bits&fState != 0 {
		m.State = broker.State(d.byte())
	}
	if bits&fSize != 0 {
		m.Size = d.varint()
	}
	if bits&fDataSections != 0 {
		d.dataSections(m)
	}
	if bits&fAMQP != 0 {
		d.passthrough(m)
	}
	if bits&fHistory != 0 {
		raw := d.fixed(d.length())
		if hist != nil && d.err == nil {
			*hist = raw
		}
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return m, nil
}

// dataSections reads the section lengths of m's body, which is read
// already, and checks that they describe it.
func (d *decoder) dataSections(m *broker.Message) {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) { // each length takes a byte at least
		d.fail("count %d beyond the end", n)
	}
	if d.err != nil {
		return
	}
	m.DataSections = make([]int, n)
	for i := range m.DataSections {
		v := d.uvarint()
		if v > uint64(len(m.Body)) {
			d.fail("data section of %d bytes in a body of %d", v, len(m.Body))
		}
		if d.err != nil {
			return
		}
		m.DataSections[i] = int(v)
	}
	if err := m.CheckDataSections(); err != nil {
		var be *broker.Error
		if errors.As(err, &be) {
			err = errors.New(be.Message)
		}
		d.fail("%v", err)
	}
}

// passthrough reads m.AMQP. The maps are not checked here: the listener
// checks them before it sends them.
func (d *decoder) passthrough(m *broker.Message) {
	flags := d.byte()
	priority := d.byte()
	p := &broker.Passthrough{
		Durable:     flags&passDurable != 0,
		Priority:    priority,
		HasPriority: flags&passPriority != 0,
	}
	p.DeliveryAnnotations = d.nilBytes()
	p.MessageAnnotations = d.nilBytes()
	p.Footer = d.nilBytes()
	if flags&passContentEncoding != 0 {
		if p.ContentEncoding = d.string(); p.ContentEncoding == "" && d.err == nil {
			d.fail("an empty content-encoding")
		}
	}
	switch {
	case d.err != nil:
	case flags&^(passDurable|passPriority|passContentEncoding) != 0:
		d.fail("unknown passthrough flags %#x", flags)
	case !p.HasPriority && priority != 0:
		d.fail("a priority (%d) without its flag", priority)
	case p.IsZero():
		d.fail("an empty passthrough")
	default:
		m.AMQP = p
	}
}
