package broker

import (
	"maps"
	"slices"
	"time"
)

// State is a message's state inside its entity, as Service Bus reports it in
// the x-opt-message-state annotation.
type State uint8

// Message states; the numbers are the wire values.
const (
	StateActive    State = 0
	StateDeferred  State = 1
	StateScheduled State = 2
)

// String returns the state's Service Bus name.
func (s State) String() string {
	switch s {
	case StateActive:
		return "Active"
	case StateDeferred:
		return "Deferred"
	case StateScheduled:
		return "Scheduled"
	}
	return "Unknown"
}

// BodyKind says how an AMQP client framed the payload.
type BodyKind uint8

// Body kinds. For BodyValue and BodySequence, Message.Body holds the body
// sections exactly as encoded on the wire, descriptors included: one
// amqp-value section (0x00 0x53 0x77 ...), or the amqp-sequence sections
// (0x00 0x53 0x76 ...) back to back. A listener sends them back unchanged, and
// the dashboard decodes them (go-amqp's Message.UnmarshalBinary accepts them
// as a message of body sections only) to render a tree.
const (
	BodyData     BodyKind = iota // one or more data sections: opaque bytes (see Message.DataSections)
	BodyValue                    // an amqp-value section
	BodySequence                 // amqp-sequence sections
)

// String returns the body kind's AMQP name.
func (k BodyKind) String() string {
	switch k {
	case BodyValue:
		return "amqp-value"
	case BodySequence:
		return "amqp-sequence"
	}
	return "data"
}

// Application properties that the broker sets when it dead-letters a message.
const (
	PropDeadLetterReason           = "DeadLetterReason"
	PropDeadLetterErrorDescription = "DeadLetterErrorDescription"
)

// Dead-letter reasons the broker itself uses. The transfer reasons go with
// messages moved to the transfer dead-letter sub-queue because they could
// not be auto-forwarded. MaxTransferHopCountExceeded and "Session ID is
// null." are the values Service Bus documents; for the other transfer
// failures, which it documents no value for, the reason is the name of the
// exception the failed send would have raised (as Service Bus does for
// errors while evaluating subscription rules) and the description its
// message.
const (
	ReasonMaxDeliveryCountExceeded    = "MaxDeliveryCountExceeded"
	ReasonTTLExpired                  = "TTLExpiredException"
	ReasonMaxTransferHopCountExceeded = "MaxTransferHopCountExceeded"
	ReasonSessionIDIsNull             = "Session ID is null."
	ReasonEntityNotFound              = "MessagingEntityNotFoundException"
	ReasonQuotaExceeded               = "QuotaExceededException"
	ReasonMessageSizeExceeded         = "MessageSizeExceededException"
	ReasonEntityDisabled              = "MessagingEntityDisabledException"
)

// Dead-letter descriptions that Service Bus documents for its transfer
// reasons.
const (
	DescriptionMaxTransferHopCountExceeded = "The maximum number of allowed hops when forwarding between queues has been exceeded. This value is set to 4."
	DescriptionSessionIDIsNull             = "Session enabled entity doesn't allow a message whose session identifier is null."
)

// MaxIDLength is the longest MessageId, SessionId and PartitionKey that
// Service Bus accepts, in UTF-16 code units (the characters of a .NET
// string).
const MaxIDLength = 128

// Message is a Service Bus message: an opaque payload plus broker properties
// (the system properties Service Bus sets or reads) and application
// properties.
//
// Fields in the first group are set by the sender; the second group is set by
// the broker and ignored on send.
type Message struct {
	MessageID        string
	ContentType      string
	CorrelationID    string
	Subject          string // Label in older SDKs
	To               string
	ReplyTo          string
	ReplyToSessionID string
	SessionID        string // at most MaxIDLength characters, like MessageID and PartitionKey
	// SessionIDSet says that the message carries a SessionId even though
	// SessionID is "": Service Bus takes the empty string as a session of
	// its own, distinct from no SessionId. It matters only when SessionID
	// is ""; use HasSessionID to ask whether a message has one.
	SessionIDSet    bool
	PartitionKey    string
	ViaPartitionKey string
	// TimeToLive is relative to EnqueuedTime. Zero means the entity's
	// DefaultMessageTimeToLive; a longer value is cut down to it.
	TimeToLive time.Duration
	// ScheduledEnqueueTime in the future makes the message Scheduled until then.
	ScheduledEnqueueTime time.Time
	// ApplicationProperties holds the application's own properties. Values are
	// of the AMQP primitive kinds: string, bool, the sized integers, float32,
	// float64, time.Time, time.Duration, []byte, UUID and nil.
	ApplicationProperties map[string]any
	// Body is the payload. For BodyData it is the bytes of every data
	// section joined, so that sizing, searching and rendering see the whole
	// payload however the sender cut it; DataSections keeps the cuts.
	Body     []byte
	BodyKind BodyKind
	// DataSections holds, for a BodyData body that an AMQP sender framed as
	// more than one data section, the length of each section in order (they
	// add up to len(Body)); listeners and clients send the sections back as
	// they came (see Sections). It is nil for a body of one data section, the
	// common case, and for the other body kinds.
	DataSections []int
	// AMQP holds what an AMQP sender put in the message that Service Bus
	// passes on to receivers untouched (header flags, its own annotations,
	// the footer); nil when there is nothing.
	AMQP *Passthrough

	SequenceNumber         int64
	EnqueuedSequenceNumber int64
	EnqueuedTime           time.Time
	ExpiresAt              time.Time // zero: never
	LockedUntil            time.Time // zero: not locked
	LockToken              LockToken
	// DeliveryCount is the number of times the message has been handed to a
	// receiver, the current delivery included: the value the Service Bus SDKs
	// show (AMQP header delivery-count + 1). A message never delivered has 0.
	DeliveryCount    uint32
	DeadLetterSource string
	// State is the message's state; a received message that was scheduled
	// reports StateScheduled although it is active now, as Service Bus does
	// (its x-opt-message-state keeps what it was when stored).
	State State
	Size  int64
	// SubQueue is the sub-queue the message was browsed or received from,
	// set by the client that read it (it does not travel on the wire; a
	// client learns it from the address it read). The dashboard tells
	// transfer-dead-lettered messages apart by it.
	SubQueue SubQueue
}

// DeadLetterReason returns the DeadLetterReason application property.
func (m *Message) DeadLetterReason() string {
	s, _ := m.ApplicationProperties[PropDeadLetterReason].(string)
	return s
}

// DeadLetterErrorDescription returns the DeadLetterErrorDescription
// application property.
func (m *Message) DeadLetterErrorDescription() string {
	s, _ := m.ApplicationProperties[PropDeadLetterErrorDescription].(string)
	return s
}

// HasSessionID reports whether the message carries a SessionId, the empty
// one ("" with SessionIDSet) included.
func (m *Message) HasSessionID() bool { return m.SessionID != "" || m.SessionIDSet }

// Locked reports whether the message carries a lock.
func (m *Message) Locked() bool { return !m.LockToken.IsZero() }

// Clone returns a deep copy: the body, its data section lengths, the AMQP
// passthrough and the property map are copied, so the copy can be changed
// without touching the original.
func (m *Message) Clone() *Message {
	c := *m
	if m.Body != nil {
		c.Body = append([]byte(nil), m.Body...)
	}
	c.DataSections = slices.Clone(m.DataSections)
	c.AMQP = m.AMQP.clone()
	if m.ApplicationProperties != nil {
		c.ApplicationProperties = maps.Clone(m.ApplicationProperties)
	}
	return &c
}

// CopyForSend returns a copy that carries only what a sender sets: the broker
// properties are cleared, so the copy can be sent again (edit and resend,
// resubmit). The dead-letter properties are removed from the copy.
func (m *Message) CopyForSend() *Message {
	c := m.Clone()
	c.SequenceNumber = 0
	c.EnqueuedSequenceNumber = 0
	c.EnqueuedTime = time.Time{}
	c.ExpiresAt = time.Time{}
	c.LockedUntil = time.Time{}
	c.LockToken = LockToken{}
	c.DeliveryCount = 0
	c.DeadLetterSource = ""
	c.State = StateActive
	c.Size = 0
	c.SubQueue = SubQueueMain
	delete(c.ApplicationProperties, PropDeadLetterReason)
	delete(c.ApplicationProperties, PropDeadLetterErrorDescription)
	return c
}
