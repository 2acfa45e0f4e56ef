package broker

import "time"

// Delivery is a stored message as handed to one receiver, without a copy of
// it: the message itself, shared, and the fields that belong to this
// delivery. The AMQP listener encodes deliveries straight from the store;
// clients that want a message of their own take Message or CopyTo.
type Delivery struct {
	// Msg is the stored message, shared with the store and with every other
	// delivery of it: it must not be changed (nor its Body,
	// ApplicationProperties, DataSections or AMQP). The engine never changes
	// a stored message either: a change stores a new one. Its per-delivery
	// fields are those it was stored with; the delivery's own are below.
	Msg *Message

	SequenceNumber int64
	// DeliveryCount is as Message.DeliveryCount: this delivery included.
	DeliveryCount uint32
	// State is the state the receiver sees (see Message.State).
	State    State
	SubQueue SubQueue
	// LockToken and LockedUntil are the delivery's lock: zero when it has
	// none (a receive-and-delete, a peek).
	LockToken   LockToken
	LockedUntil time.Time
}

// DeliveryOf returns the delivery that m describes: m, with its own
// per-delivery fields.
func DeliveryOf(m *Message) Delivery {
	return Delivery{
		Msg:            m,
		SequenceNumber: m.SequenceNumber,
		DeliveryCount:  m.DeliveryCount,
		State:          m.State,
		SubQueue:       m.SubQueue,
		LockToken:      m.LockToken,
		LockedUntil:    m.LockedUntil,
	}
}

// CopyTo sets *m to a copy of d's message with the delivery's fields; the
// copy shares Body, ApplicationProperties, DataSections and AMQP with the
// stored message, so it is as read-only as they are (Clone before changing).
func (d *Delivery) CopyTo(m *Message) {
	*m = *d.Msg
	m.SequenceNumber, m.DeliveryCount, m.State, m.SubQueue = d.SequenceNumber, d.DeliveryCount, d.State, d.SubQueue
	m.LockToken, m.LockedUntil = d.LockToken, d.LockedUntil
}

// Message returns a copy of d's message with the delivery's fields (see
// CopyTo).
func (d *Delivery) Message() *Message {
	m := new(Message)
	d.CopyTo(m)
	return m
}
