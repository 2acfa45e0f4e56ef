package store

import (
	"time"

	"github.com/peeklock/peeklock/broker"
)

// An entity record is written field by field in a fixed order.
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

// entityVersion is the first byte of an encoded entity record; records of
// every version from 1 up are read.
const entityVersion = 5

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
