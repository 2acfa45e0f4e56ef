package broker

import (
	"cmp"
	"context"
	"time"
)

// Category is one of the dashboard's panes: the messages of an entity grouped
// by what can be done with them.
type Category uint8

// Categories, in pane order.
const (
	CategoryActive       Category = iota // active and not locked
	CategoryLocked                       // locked (by anyone the endpoint can see)
	CategoryDeferred                     // deferred and not locked
	CategoryScheduled                    // scheduled
	CategoryDeadLettered                 // everything in the dead-letter and transfer dead-letter sub-queues
)

// Categories lists every category in pane order.
var Categories = [...]Category{CategoryActive, CategoryLocked, CategoryDeferred, CategoryScheduled, CategoryDeadLettered}

// String returns the pane title of the category.
func (c Category) String() string {
	switch c {
	case CategoryActive:
		return "Active"
	case CategoryLocked:
		return "Locked"
	case CategoryDeferred:
		return "Deferred"
	case CategoryScheduled:
		return "Scheduled"
	case CategoryDeadLettered:
		return "Dead-lettered"
	}
	return "Unknown"
}

// Count returns the count of c in n.
func (n Counts) Count(c Category) int64 {
	switch c {
	case CategoryActive:
		return n.Active
	case CategoryLocked:
		return n.Locked
	case CategoryDeferred:
		return n.Deferred
	case CategoryScheduled:
		return n.Scheduled
	case CategoryDeadLettered:
		return n.DeadLettered + n.TransferDeadLettered
	}
	return 0
}

// BrowseRequest asks for a window of messages of one category. Browsing never
// locks a message and never changes its delivery count.
//
// The Dead-lettered category of an entity merges its dead-letter and
// transfer dead-letter sub-queues in sequence order (a message is in one of
// them, and keeps its sequence number there); each message's SubQueue says
// which. Entity may also be a sub-queue's address, which browses that
// sub-queue alone whatever the Category.
type BrowseRequest struct {
	Entity   string
	Category Category
	// FromSequence is the first sequence number wanted (inclusive); the window
	// holds the messages of the category with sequence numbers >= FromSequence,
	// in ascending order.
	FromSequence int64
	// Max is the most messages to return (the window size).
	Max int
	// DueOrder orders a Scheduled window by due time (ScheduledEnqueueTime
	// ascending, then sequence number) instead of by sequence number alone.
	// FromSequence then names the window's first message: the window starts
	// at that message's place in due order, or at the first scheduled
	// message when it is no longer scheduled (it was activated, which
	// happens in due order, or cancelled); 0 starts at the first. Other
	// categories ignore DueOrder.
	DueOrder bool
}

// CompareDue orders scheduled messages as a DueOrder window does: by
// ScheduledEnqueueTime, then by sequence number.
func CompareDue(a, b *Message) int {
	if c := a.ScheduledEnqueueTime.Compare(b.ScheduledEnqueueTime); c != 0 {
		return c
	}
	return cmp.Compare(a.SequenceNumber, b.SequenceNumber)
}

// ReceiveMode is how a receive hands messages over.
type ReceiveMode uint8

// Receive modes.
const (
	PeekLock ReceiveMode = iota
	ReceiveAndDelete
)

// ReceiveRequest asks for up to Max messages from an entity (or one of its
// sub-queues) in sequence order, skipping locked ones.
type ReceiveRequest struct {
	Entity string
	// SubQueue selects a sub-queue; an Entity address with a sub-queue
	// suffix selects it too (the two must then agree).
	SubQueue SubQueue
	Mode     ReceiveMode
	Max      int
	// MaxWait is how long to wait for the first message when none is
	// available; zero returns at once.
	MaxWait time.Duration
}

// SettleKind is how a locked message is settled.
type SettleKind uint8

// Settlements.
const (
	Complete SettleKind = iota
	Abandon
	DeadLetter
	Defer
	// Release gives the message back without counting a failed delivery
	// (AMQP's released outcome): for a message the application never saw,
	// such as one that arrived after a receive call had returned.
	Release
)

// String returns the settlement's name.
func (k SettleKind) String() string {
	switch k {
	case Complete:
		return "complete"
	case Abandon:
		return "abandon"
	case DeadLetter:
		return "dead-letter"
	case Defer:
		return "defer"
	case Release:
		return "release"
	}
	return "unknown"
}

// Settlement settles one locked message.
type Settlement struct {
	Kind SettleKind
	// Entity is the address the message was received from, with the
	// sub-queue's suffix for a sub-queue (SubQueueAddress).
	Entity string
	Token  LockToken
	// Reason and Description of a dead-lettering.
	Reason      string
	Description string
	// PropertiesToModify are merged into the application properties
	// (abandon, defer and dead-letter).
	PropertiesToModify map[string]any
}

// Client is what the dashboard polls and drives: the embedded engine and
// remote endpoints implement it. Every method is safe for concurrent use and
// honours ctx.
type Client interface {
	// Endpoint describes where the client is connected, for the status bar.
	Endpoint() string
	// Capabilities says what this endpoint can do.
	Capabilities() Capabilities
	// Entities lists queues, topics and subscriptions with their counts.
	Entities(ctx context.Context) ([]Entity, error)
	// Browse returns a window of messages of one category without locking.
	Browse(ctx context.Context, req BrowseRequest) ([]*Message, error)
	// Receive hands over messages under peek-lock or receive-and-delete.
	Receive(ctx context.Context, req ReceiveRequest) ([]*Message, error)
	// ReceiveDeferred locks deferred messages by sequence number.
	ReceiveDeferred(ctx context.Context, entity string, seqs []int64) ([]*Message, error)
	// Settle completes, abandons, dead-letters or defers a locked message.
	Settle(ctx context.Context, s Settlement) error
	// RenewLock extends a lock by the entity's lock duration and returns the
	// new expiry.
	RenewLock(ctx context.Context, entity string, token LockToken) (time.Time, error)
	// Send sends messages to an entity and returns after the endpoint has
	// accepted (and, when durable, stored) all of them.
	Send(ctx context.Context, entity string, msgs []*Message) error
	// Schedule sends messages that become active at the given time and
	// returns their sequence numbers.
	Schedule(ctx context.Context, entity string, at time.Time, msgs []*Message) ([]int64, error)
	// CancelScheduled removes scheduled messages.
	CancelScheduled(ctx context.Context, entity string, seqs []int64) error
	// Purge removes every message of the entity's main queue or of one of
	// its sub-queues and returns how many were removed.
	Purge(ctx context.Context, entity string, sub SubQueue) (int64, error)
	// Events returns a stream of broker events and a function that ends the
	// subscription, or a nil channel when the endpoint has no event stream.
	Events() (<-chan Event, func())
	// Close releases the client's resources; locks it holds are released.
	Close() error
}

// StatusReporter is implemented by clients whose connection can drop and
// come back (remote endpoints). The dashboard shows State in its status bar
// and Notice beside it.
type StatusReporter interface {
	// State is "connected", or what is wrong ("reconnecting (attempt 3)").
	State() string
	// Notice explains a limitation the user should know about, such as
	// entities that cannot be listed without Manage rights; "" for none.
	Notice() string
}

// StatusOf returns c's state and notice, or "" and "" when c does not
// report them.
func StatusOf(c Client) (state, notice string) {
	if sr, ok := c.(StatusReporter); ok {
		return sr.State(), sr.Notice()
	}
	return "", ""
}
