package store

import "github.com/peeklock/peeklock/broker"

// A meta record is written field by field in a fixed order.

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
