package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

// The binary record formats of the durable store.
//
// Every record starts with one byte, the codec version, so that a later
// version can read records written by this one. Integers are
// encoding/binary varints (zig-zag for signed values), strings and byte
// slices are a uvarint length followed by the bytes, and a time is a varint of
// Unix seconds followed by a uvarint of nanoseconds (the zero time.Time is
// written as absent).
//
// A message is written as a uvarint bitmap of the fields that are set,
// followed by those fields in bit order; unset fields cost nothing. The
// SessionID field is set whenever the message has a SessionId
// (HasSessionID): the empty session is written as an empty string. A meta
// and an entity record are written field by field in a fixed order.
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
//
// Entity records have their own version, entityVersion: version 1 ends
// after the rules; version 2 adds the entity's CreatedAt, UpdatedAt and
// UserMetadata and then each rule's CreatedAt (a time that may be zero is
// written as a byte 0, or 1 and the time); version 3 adds each rule's SQL
// action (a string, empty for none) after those; version 4 adds, after the
// actions, each rule's Parameters and then its ActionParameters, written as
// application properties are (a nil map is a single 0); version 5 adds,
// after those, the settings that came with entity status and auto-delete:
// ForwardToURI, ForwardDeadLetteredMessagesToURI, Status (a byte),
// AutoDeleteOnIdle, a byte of flags (EnablePartitioning,
// DisableBatchedOperations, DisableSupportOrdering,
// DisableFilterExceptionDeadLettering), and the entity's authorization rules (a count
// written as lenPlusOne, then each rule's KeyName, PrimaryKey, SecondaryKey,
// Rights as a byte, CreatedTime and ModifiedTime as optional times). Every
// version is read; a record of an older version reads as rules without the
// fields it lacks (actions, parameters) and settings with the defaults of
// those it lacks (Active, AutoDeleteOnIdle never, no partitioning, batched
// operations on, no authorization rules).
//
// Application properties keep their Go types: each value is written as a
// one-byte type tag followed by the value.

// codecVersion is the first byte of an encoded meta and of other records
// that have one version (duplicate-detection history).
const codecVersion = 1

// messageVersion is the first byte of an encoded message;
// messageVersionHistory that of one with a history event. Records of
// versions 1 to 3 are read.
const (
	messageVersion        = 2
	messageVersionHistory = 3
)

// stateVersion is the first byte of a session state that carries the time
// it was set; states written before have codecVersion and no time.
const stateVersion = 2

// entityVersion is the first byte of an encoded entity record; records of
// every version from 1 up are read.
const entityVersion = 5

// ErrCorrupt is the cause (Err) of the *broker.Error returned when stored
// bytes cannot be decoded: errors.Is(err, store.ErrCorrupt) reports it.
var ErrCorrupt = errors.New("corrupt record")

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

// Application property type tags.
const (
	tagNil byte = iota
	tagString
	tagFalse
	tagTrue
	tagInt8
	tagInt16
	tagInt32
	tagInt64
	tagUint8
	tagUint16
	tagUint32
	tagUint64
	tagFloat32
	tagFloat64
	tagTime
	tagDuration
	tagBytes
	tagLockToken
	tagUUID
)

// Passthrough flags.
const (
	passDurable = 1 << iota
	passPriority
	passContentEncoding // a string after the footer
)

// Entity setting flags.
const (
	flagDeadLetteringOnMessageExpiration = 1 << iota
	flagRequiresDuplicateDetection
	flagRequiresSession
)

// Entity setting flags of version 5, in a byte of their own.
const (
	flagEnablePartitioning = 1 << iota
	flagDisableBatchedOperations
	flagDisableSupportOrdering
	flagDisableFilterExceptionDeadLettering
	settingFlags = flagEnablePartitioning | flagDisableBatchedOperations | flagDisableSupportOrdering | flagDisableFilterExceptionDeadLettering
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

// appendMeta appends the encoding of m to dst and returns the extended slice.
func appendMeta(dst []byte, m *Meta) []byte {
	e := encoder{buf: dst}
	e.byte(codecVersion)
	e.byte(byte(m.State))
	e.uvarint(uint64(m.DeliveryCount))
	e.varint(m.EnqueuedTime)
	e.varint(m.ExpiresAt)
	e.varint(m.ScheduledTime)
	e.varint(m.Size)
	e.string(m.SessionID)
	e.string(m.MessageID)
	return e.buf
}

// decodeMeta decodes a meta written by appendMeta. Bytes that are not a
// valid encoding give a *broker.Error whose Err is ErrCorrupt.
func decodeMeta(b []byte) (Meta, error) {
	d := decoder{b: b, what: "meta"}
	d.version()
	var m Meta
	m.State = broker.State(d.byte())
	m.DeliveryCount = d.uint32()
	m.EnqueuedTime = d.varint()
	m.ExpiresAt = d.varint()
	m.ScheduledTime = d.varint()
	m.Size = d.varint()
	m.SessionID = d.string()
	m.MessageID = d.string()
	if err := d.finish(); err != nil {
		return Meta{}, err
	}
	return m, nil
}

// appendEntity appends the encoding of rec (without its Counts, which are not
// stored) to dst and returns the extended slice. A filter property of a type
// the codec does not know is a *broker.Error with CodeInvalid; dst is then
// returned unchanged.
func appendEntity(dst []byte, rec *EntityRecord) ([]byte, error) {
	if err := checkRules(rec.Entity.Rules); err != nil {
		return dst, err
	}
	ent := &rec.Entity
	st := &ent.Settings
	e := encoder{buf: dst}
	e.byte(entityVersion)
	e.uvarint(uint64(rec.ID))
	e.string(ent.Path)
	e.byte(byte(ent.Kind))
	e.varint(int64(st.LockDuration))
	e.varint(int64(st.MaxDeliveryCount))
	e.varint(int64(st.DefaultMessageTimeToLive))
	var flags byte
	if st.DeadLetteringOnMessageExpiration {
		flags |= flagDeadLetteringOnMessageExpiration
	}
	if st.RequiresDuplicateDetection {
		flags |= flagRequiresDuplicateDetection
	}
	if st.RequiresSession {
		flags |= flagRequiresSession
	}
	e.byte(flags)
	e.varint(int64(st.DuplicateDetectionHistoryTimeWindow))
	e.string(st.ForwardTo)
	e.string(st.ForwardDeadLetteredMessagesTo)
	e.varint(st.MaxSizeInMegabytes)
	e.varint(st.MaxMessageSizeInKilobytes)
	if ent.Rules == nil {
		e.uvarint(0)
	} else {
		e.uvarint(uint64(len(ent.Rules)) + 1)
	}
	for i := range ent.Rules {
		r := &ent.Rules[i]
		e.string(r.Name)
		e.string(r.SQL)
		f := r.Filter
		if f == nil {
			e.byte(0)
			continue
		}
		e.byte(1)
		for _, s := range [...]string{f.CorrelationID, f.MessageID, f.To, f.ReplyTo, f.Subject, f.SessionID, f.ReplyToSessionID, f.ContentType} {
			e.string(s)
		}
		e.props(f.Properties)
	}
	e.optTime(ent.CreatedAt)
	e.optTime(ent.UpdatedAt)
	e.string(ent.UserMetadata)
	for i := range ent.Rules {
		e.optTime(ent.Rules[i].CreatedAt)
	}
	for i := range ent.Rules {
		e.string(ent.Rules[i].Action)
	}
	for i := range ent.Rules {
		e.props(ent.Rules[i].Parameters)
		e.props(ent.Rules[i].ActionParameters)
	}
	e.string(st.ForwardToURI)
	e.string(st.ForwardDeadLetteredMessagesToURI)
	e.byte(byte(st.Status))
	e.varint(int64(st.AutoDeleteOnIdle))
	var flags5 byte
	if st.EnablePartitioning {
		flags5 |= flagEnablePartitioning
	}
	if st.DisableBatchedOperations {
		flags5 |= flagDisableBatchedOperations
	}
	if st.DisableSupportOrdering {
		flags5 |= flagDisableSupportOrdering
	}
	if st.DisableFilterExceptionDeadLettering {
		flags5 |= flagDisableFilterExceptionDeadLettering
	}
	e.byte(flags5)
	e.lenPlusOne(ent.AuthorizationRules == nil, len(ent.AuthorizationRules))
	for _, r := range ent.AuthorizationRules {
		e.string(r.KeyName)
		e.string(r.PrimaryKey)
		e.string(r.SecondaryKey)
		e.byte(byte(r.Rights))
		e.optTime(r.CreatedTime)
		e.optTime(r.ModifiedTime)
	}
	return e.buf, nil
}

// decodeEntity decodes an entity record written by appendEntity. Bytes that
// are not a valid encoding give a *broker.Error whose Err is ErrCorrupt.
func decodeEntity(b []byte) (EntityRecord, error) {
	d := decoder{b: b, what: "entity"}
	version := d.byte()
	if d.err == nil && (version < 1 || version > entityVersion) {
		d.fail("unknown entity version %d", version)
	}
	var rec EntityRecord
	rec.ID = d.uint32()
	ent := &rec.Entity
	st := &ent.Settings
	ent.Path = d.string()
	ent.Kind = broker.EntityKind(d.byte())
	st.LockDuration = time.Duration(d.varint())
	st.MaxDeliveryCount = d.int32()
	st.DefaultMessageTimeToLive = time.Duration(d.varint())
	flags := d.byte()
	if flags&^(flagDeadLetteringOnMessageExpiration|flagRequiresDuplicateDetection|flagRequiresSession) != 0 {
		d.fail("unknown setting flags %#x", flags)
	}
	st.DeadLetteringOnMessageExpiration = flags&flagDeadLetteringOnMessageExpiration != 0
	st.RequiresDuplicateDetection = flags&flagRequiresDuplicateDetection != 0
	st.RequiresSession = flags&flagRequiresSession != 0
	st.DuplicateDetectionHistoryTimeWindow = time.Duration(d.varint())
	st.ForwardTo = d.string()
	st.ForwardDeadLetteredMessagesTo = d.string()
	st.MaxSizeInMegabytes = d.varint()
	st.MaxMessageSizeInKilobytes = d.varint()
	if n, ok := d.count(3); ok {
		ent.Rules = make([]broker.Rule, n)
		for i := range ent.Rules {
			r := &ent.Rules[i]
			r.Name = d.string()
			r.SQL = d.string()
			switch d.byte() {
			case 0:
			case 1:
				f := new(broker.CorrelationFilter)
				for _, s := range [...]*string{&f.CorrelationID, &f.MessageID, &f.To, &f.ReplyTo, &f.Subject, &f.SessionID, &f.ReplyToSessionID, &f.ContentType} {
					*s = d.string()
				}
				f.Properties = d.props()
				r.Filter = f
			default:
				d.fail("bad filter flag")
			}
			if d.err != nil {
				break
			}
		}
	}
	if version >= 2 {
		ent.CreatedAt = d.optTime()
		ent.UpdatedAt = d.optTime()
		ent.UserMetadata = d.string()
		for i := range ent.Rules {
			ent.Rules[i].CreatedAt = d.optTime()
		}
	}
	if version >= 3 {
		for i := range ent.Rules {
			ent.Rules[i].Action = d.string()
		}
	}
	if version >= 4 {
		for i := range ent.Rules {
			ent.Rules[i].Parameters = d.props()
			ent.Rules[i].ActionParameters = d.props()
		}
	}
	if version >= 5 {
		d.entityV5(ent)
	} else {
		st.AutoDeleteOnIdle = broker.MaxTimeToLive
	}
	if err := d.finish(); err != nil {
		return EntityRecord{}, err
	}
	return rec, nil
}

// entityV5 reads what version 5 added to an entity record.
func (d *decoder) entityV5(ent *broker.Entity) {
	st := &ent.Settings
	st.ForwardToURI = d.string()
	st.ForwardDeadLetteredMessagesToURI = d.string()
	st.Status = broker.EntityStatus(d.byte())
	if d.err == nil && !st.Status.Valid() {
		d.fail("unknown entity status %d", st.Status)
	}
	st.AutoDeleteOnIdle = time.Duration(d.varint())
	flags := d.byte()
	if flags&^settingFlags != 0 {
		d.fail("unknown setting flags %#x", flags)
	}
	st.EnablePartitioning = flags&flagEnablePartitioning != 0
	st.DisableBatchedOperations = flags&flagDisableBatchedOperations != 0
	st.DisableSupportOrdering = flags&flagDisableSupportOrdering != 0
	st.DisableFilterExceptionDeadLettering = flags&flagDisableFilterExceptionDeadLettering != 0
	// Each rule takes at least 6 bytes (three empty strings, the rights
	// and two absent times).
	if n, ok := d.count(6); ok {
		ent.AuthorizationRules = make([]broker.AuthorizationRule, n)
		for i := range ent.AuthorizationRules {
			r := &ent.AuthorizationRules[i]
			r.KeyName = d.string()
			r.PrimaryKey = d.string()
			r.SecondaryKey = d.string()
			r.Rights = broker.AccessRights(d.byte())
			if d.err == nil && r.Rights&^broker.AllRights != 0 {
				d.fail("unknown access rights %#x", uint8(r.Rights))
			}
			r.CreatedTime = d.optTime()
			r.ModifiedTime = d.optTime()
			if d.err != nil {
				break
			}
		}
	}
}

// checkRules returns a CodeInvalid error for a rule whose filter properties
// or parameters hold a value of a type the codec cannot store.
func checkRules(rules []broker.Rule) error {
	for _, r := range rules {
		name := "rule " + strconvQuote(r.Name)
		if r.Filter != nil {
			if err := checkProps(r.Filter.Properties, name+" filter property"); err != nil {
				return err
			}
		}
		if err := checkProps(r.Parameters, name+" filter parameter"); err != nil {
			return err
		}
		if err := checkProps(r.ActionParameters, name+" action parameter"); err != nil {
			return err
		}
	}
	return nil
}

// checkProps returns a CodeInvalid error naming the first property (in key
// order) whose type the codec cannot store.
func checkProps(m map[string]any, what string) error {
	var bad []string
	for k, v := range m {
		if !storableProp(v) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return &broker.Error{
		Code:    broker.CodeInvalid,
		Message: fmt.Sprintf("%s %s has unsupported type %T", what, strconvQuote(bad[0]), m[bad[0]]),
	}
}

func storableProp(v any) bool {
	switch v.(type) {
	case nil, string, bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
		float32, float64, time.Time, time.Duration, []byte, broker.LockToken, uuid.UUID:
		return true
	}
	return false
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// encoder appends to buf.
type encoder struct {
	buf []byte
}

func (e *encoder) byte(b byte)       { e.buf = append(e.buf, b) }
func (e *encoder) uvarint(v uint64)  { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) varint(v int64)    { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) string(s string)   { e.uvarint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) bytes(b []byte)    { e.uvarint(uint64(len(b))); e.buf = append(e.buf, b...) }
func (e *encoder) nilBytes(b []byte) { e.lenPlusOne(b == nil, len(b)); e.buf = append(e.buf, b...) }
func (e *encoder) time(t time.Time)  { e.varint(t.Unix()); e.uvarint(uint64(t.Nanosecond())) }
func (e *encoder) fixed(b []byte)    { e.buf = append(e.buf, b...) }

// optTime writes a time that may be zero: a byte 0, or 1 and the time.
func (e *encoder) optTime(t time.Time) {
	if t.IsZero() {
		e.byte(0)
		return
	}
	e.byte(1)
	e.time(t)
}
func (e *encoder) lenPlusOne(isNil bool, n int) {
	if isNil {
		e.uvarint(0)
	} else {
		e.uvarint(uint64(n) + 1)
	}
}

// props writes a property map: a uvarint of 0 for nil or the entry count
// plus one, then the entries in key order. The caller has checked the types
// with checkProps.
func (e *encoder) props(m map[string]any) {
	e.lenPlusOne(m == nil, len(m))
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.string(k)
		e.value(m[k])
	}
}

func (e *encoder) value(v any) {
	switch v := v.(type) {
	case nil:
		e.byte(tagNil)
	case string:
		e.byte(tagString)
		e.string(v)
	case bool:
		if v {
			e.byte(tagTrue)
		} else {
			e.byte(tagFalse)
		}
	case int8:
		e.byte(tagInt8)
		e.byte(byte(v))
	case int16:
		e.byte(tagInt16)
		e.varint(int64(v))
	case int32:
		e.byte(tagInt32)
		e.varint(int64(v))
	case int64:
		e.byte(tagInt64)
		e.varint(v)
	case uint8:
		e.byte(tagUint8)
		e.byte(v)
	case uint16:
		e.byte(tagUint16)
		e.uvarint(uint64(v))
	case uint32:
		e.byte(tagUint32)
		e.uvarint(uint64(v))
	case uint64:
		e.byte(tagUint64)
		e.uvarint(v)
	case float32:
		e.byte(tagFloat32)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(v))
	case float64:
		e.byte(tagFloat64)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v))
	case time.Time:
		e.byte(tagTime)
		e.time(v)
	case time.Duration:
		e.byte(tagDuration)
		e.varint(int64(v))
	case []byte:
		e.byte(tagBytes)
		e.nilBytes(v)
	case broker.LockToken:
		e.byte(tagLockToken)
		e.fixed(v[:])
	case uuid.UUID:
		e.byte(tagUUID)
		e.fixed(v[:])
	}
}

// decoder reads from b. The first failure is kept in err; every later read
// returns a zero value, so decoding code checks err once at the end.
type decoder struct {
	b    []byte
	what string // "message", "meta", "entity": for error messages
	err  error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = &broker.Error{
			Code:    broker.CodeUnknown,
			Message: fmt.Sprintf("corrupt stored %s: %s", d.what, fmt.Sprintf(format, args...)),
			Err:     ErrCorrupt,
		}
	}
	d.b = nil
}

func (d *decoder) version() {
	if v := d.byte(); d.err == nil && v != codecVersion {
		d.fail("unknown codec version %d", v)
	}
}

func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint32() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail("value %d out of range", v)
		return 0
	}
	return uint32(v)
}

func (d *decoder) int32() int32 {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("value %d out of range", v)
		return 0
	}
	return int32(v)
}

// fixed returns the next n bytes (not copied).
func (d *decoder) fixed(n int) []byte {
	if len(d.b) < n {
		d.fail("truncated")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// length reads a length and checks that that many bytes follow.
func (d *decoder) length() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("length %d beyond the end", n)
		return 0
	}
	return int(n)
}

func (d *decoder) string() string { return string(d.fixed(d.length())) }

// bytes reads a byte slice written by encoder.bytes; an empty one is nil.
func (d *decoder) bytes() []byte {
	n := d.length()
	if n == 0 {
		return nil
	}
	return slices.Clone(d.fixed(n))
}

// count reads a count written by lenPlusOne: ok is false for nil. Each entry
// takes at least minSize bytes, which bounds the count by what is left.
func (d *decoder) count(minSize int) (n int, ok bool) {
	v := d.uvarint()
	if v == 0 || d.err != nil {
		return 0, false
	}
	v--
	if v > uint64(len(d.b)/minSize) {
		d.fail("count %d beyond the end", v)
		return 0, false
	}
	return int(v), true
}

func (d *decoder) nilBytes() []byte {
	n, ok := d.count(1)
	if !ok {
		return nil
	}
	b := make([]byte, n)
	copy(b, d.fixed(n))
	return b
}

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if d.err != nil {
		return time.Time{}
	}
	if nsec >= 1e9 {
		d.fail("nanoseconds %d out of range", nsec)
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// optTime reads a time written by encoder.optTime.
func (d *decoder) optTime() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		return d.time()
	}
	d.fail("bad time flag")
	return time.Time{}
}

func (d *decoder) props() map[string]any {
	n, ok := d.count(2)
	if !ok {
		return nil
	}
	m := make(map[string]any, n)
	prev := ""
	for i := range n {
		k := d.string()
		if d.err != nil {
			return nil
		}
		if i > 0 && k <= prev {
			d.fail("property keys out of order at %q", k)
			return nil
		}
		prev = k
		m[k] = d.value()
	}
	return m
}

func (d *decoder) value() any {
	switch tag := d.byte(); tag {
	case tagNil:
		return nil
	case tagString:
		return d.string()
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt8:
		return int8(d.byte())
	case tagInt16:
		v := d.varint()
		if v < math.MinInt16 || v > math.MaxInt16 {
			d.fail("int16 %d out of range", v)
		}
		return int16(v)
	case tagInt32:
		return d.int32()
	case tagInt64:
		return d.varint()
	case tagUint8:
		return d.byte()
	case tagUint16:
		v := d.uvarint()
		if v > math.MaxUint16 {
			d.fail("uint16 %d out of range", v)
		}
		return uint16(v)
	case tagUint32:
		return d.uint32()
	case tagUint64:
		return d.uvarint()
	case tagFloat32:
		b := d.fixed(4)
		if b == nil {
			return nil
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case tagFloat64:
		b := d.fixed(8)
		if b == nil {
			return nil
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case tagTime:
		return d.time()
	case tagDuration:
		return time.Duration(d.varint())
	case tagBytes:
		return d.nilBytes()
	case tagLockToken:
		var t broker.LockToken
		copy(t[:], d.fixed(16))
		return t
	case tagUUID:
		var u uuid.UUID
		copy(u[:], d.fixed(16))
		return u
	default:
		d.fail("unknown property type tag %d", tag)
		return nil
	}
}

// historyActorRef is the first byte of an encoded history event whose
// actor is kept once in the store (see actorRefs) and named in the event by
// its hash; an event that starts with codecVersion keeps its actor inline.
const historyActorRef = 2

// minActorRef is the length from which an actor is kept by reference: a
// shorter one costs no more inline than its hash.
const minActorRef = 16

// actorHash names an actor kept by reference: FNV-1a, 64 bits. Two actors
// with one hash would show the later one's name in the earlier one's
// events (odds about 1 in 10^7 for a million actors).
func actorHash(actor string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(actor))
	return h.Sum64()
}

// actorRefs collects the actors that the events of one batch name by
// reference, for the store to keep beside them in the same batch (each
// once per batch, not once per message: a connection's actor is about 100
// bytes, a tenth of a 1 KiB message).
type actorRefs struct {
	hashes []uint64
	names  []string
}

// ref returns the hash of actor and keeps actor for the batch. The events
// of a batch name few actors, most of them many times: the name is looked
// up before it is hashed.
func (r *actorRefs) ref(actor string) uint64 {
	if i := slices.Index(r.names, actor); i >= 0 {
		return r.hashes[i]
	}
	h := actorHash(actor)
	r.hashes, r.names = append(r.hashes, h), append(r.names, actor)
	return h
}

// appendHistoryEvent appends the encoding of a history event to dst. With
// refs not nil, a long actor is written as its hash and kept in refs.
func appendHistoryEvent(dst []byte, ev *HistoryEvent, refs *actorRefs) []byte {
	e := encoder{buf: dst}
	byRef := refs != nil && len(ev.Actor) >= minActorRef
	if byRef {
		e.byte(historyActorRef)
	} else {
		e.byte(codecVersion)
	}
	e.byte(byte(ev.Kind))
	e.byte(byte(ev.Sub))
	e.uvarint(uint64(ev.DeliveryCount))
	e.varint(ev.Time)
	e.varint(ev.Until)
	if ev.Token.IsZero() {
		e.byte(0)
	} else {
		e.byte(1)
		e.fixed(ev.Token[:])
	}
	if byRef {
		e.buf = binary.BigEndian.AppendUint64(e.buf, refs.ref(ev.Actor))
	} else {
		e.string(ev.Actor)
	}
	e.string(ev.Reason)
	e.string(ev.Detail)
	return e.buf
}

// actorLookup returns the actor that a history event names by its hash.
type actorLookup func(hash uint64) (string, error)

// decodeHistoryEvent decodes an event written by appendHistoryEvent; an
// actor kept by reference is read with actor (an event that has one is an
// error when actor is nil).
func decodeHistoryEvent(b []byte, actor actorLookup) (HistoryEvent, error) {
	d := decoder{b: b, what: "history event"}
	byRef := len(d.b) > 0 && d.b[0] == historyActorRef
	if byRef {
		d.byte()
	} else {
		d.version()
	}
	var ev HistoryEvent
	ev.Kind = broker.EventKind(d.byte())
	ev.Sub = broker.SubQueue(d.byte())
	ev.DeliveryCount = d.uint32()
	ev.Time = d.varint()
	ev.Until = d.varint()
	if d.byte() == 1 {
		copy(ev.Token[:], d.fixed(len(ev.Token)))
	}
	var hash uint64
	if byRef {
		if h := d.fixed(8); d.err == nil {
			hash = binary.BigEndian.Uint64(h)
		}
	} else {
		ev.Actor = d.string()
	}
	ev.Reason = d.string()
	ev.Detail = d.string()
	if err := d.finish(); err != nil {
		return HistoryEvent{}, err
	}
	if byRef {
		if actor == nil {
			return HistoryEvent{}, corrupt("history event names actor %016x, which nothing keeps", hash)
		}
		name, err := actor(hash)
		if err != nil {
			return HistoryEvent{}, err
		}
		ev.Actor = name
	}
	return ev, nil
}
