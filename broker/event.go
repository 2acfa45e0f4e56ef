package broker

import "time"

// EventKind says what happened to a message or an entity.
type EventKind uint8

// Event kinds.
const (
	EventSent          EventKind = iota // accepted and stored (active)
	EventScheduled                      // accepted as scheduled
	EventActivated                      // a scheduled message became active
	EventCancelled                      // a scheduled message was cancelled
	EventLocked                         // handed over under peek-lock
	EventReceived                       // handed over in receive-and-delete mode
	EventRenewed                        // lock renewed
	EventCompleted                      // completed and removed
	EventAbandoned                      // lock released by abandon
	EventDeferred                       // deferred
	EventDeadLettered                   // moved to the dead-letter sub-queue (SubQueue says which: the transfer one when it could not be forwarded)
	EventLockExpired                    // lock ran out
	EventLockLost                       // lock lost (connection dropped, settings changed)
	EventExpired                        // time to live ran out; dropped or dead-lettered
	EventForwarded                      // forwarded to another entity
	EventPurged                         // entity purged
	EventEntityChanged                  // entity created, updated or deleted
	EventReleased                       // lock given back unseen (released): not a failed delivery
	EventResubmitted                    // a copy was sent back from a dead-letter sub-queue (message histories only)
)

var eventNames = [...]string{
	EventSent: "sent", EventScheduled: "scheduled", EventActivated: "activated",
	EventCancelled: "cancelled", EventLocked: "locked", EventReceived: "received",
	EventRenewed: "renewed", EventCompleted: "completed", EventAbandoned: "abandoned",
	EventDeferred: "deferred", EventDeadLettered: "dead-lettered", EventLockExpired: "lock expired",
	EventLockLost: "lock lost", EventExpired: "expired", EventForwarded: "forwarded",
	EventPurged: "purged", EventEntityChanged: "entity changed", EventReleased: "released",
	EventResubmitted: "resubmitted",
}

// String returns the event's name.
func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "unknown"
}

// Event is one change an observer may want to show.
type Event struct {
	Kind      EventKind
	Time      time.Time
	Entity    string
	SubQueue  SubQueue
	Sequence  int64
	MessageID string
	Token     LockToken
	// Reason carries the dead-letter reason, or the entity an event forwarded to.
	Reason string
	// Missed counts the events dropped for this observer before this one
	// because it fell behind; an observer that sees Missed > 0 should refresh.
	Missed uint64
}
