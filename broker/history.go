package broker

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// HistoryReader is implemented by clients that keep each stored message's
// history (the embedded engine): who sent it and from where, each delivery
// with its lock, renewals, abandons, lock expiries and losses, deferral,
// dead-lettering and resubmission. Remote endpoints do not implement it
// (Service Bus keeps no history). Use HistoryOf to find it through
// wrappers; reading a history changes nothing, so a read-only wrapper
// passes it through.
type HistoryReader interface {
	// History returns the history of the message with sequence number seq
	// in entity (an address: a sub-queue's carries its suffix, though the
	// history is the message's wherever it is now). A message that is not
	// stored (settled, expired, purged) has no history:
	// ErrMessageNotFound. An engine with history turned off fails with
	// CodeNotSupported.
	History(ctx context.Context, entity string, seq int64) (History, error)
}

// History is the recorded life of one stored message, oldest event first.
type History struct {
	Entity   string
	Sequence int64
	// Folded counts the oldest events that were dropped to keep the
	// history bounded; the events shown are the newest.
	Folded int
	Events []HistoryEvent
}

// HistoryEvent is one thing that happened to a message.
type HistoryEvent struct {
	Kind EventKind
	Time time.Time
	// SubQueue is where the message was when it happened.
	SubQueue SubQueue
	// Actor says who did it: a connection and link of the listener, the
	// dashboard, or ActorBroker for what the broker did on its own (lock
	// expiry, time to live, the delivery limit).
	Actor string
	// Token and LockedUntil are the lock of a delivery or renewal, and the
	// lock an abandon, release, deferral, expiry or loss ended.
	Token       LockToken
	LockedUntil time.Time
	// DeliveryCount is the message's delivery count after the event.
	DeliveryCount uint32
	// Reason is the dead-letter reason, or why a lock was lost.
	Reason string
	// Detail says more: where a message was forwarded or fanned out from,
	// the properties an abandon changed, the copy a resubmit made.
	Detail string
}

// ActorBroker is the Actor of what the broker does on its own.
const ActorBroker = "broker"

// ActorDashboard is the Actor of what the dashboard does, and of a call
// through an engine handle that names no other actor (see ActingAs).
const ActorDashboard = "dashboard"

// An ActorRecorder is a Client that records in the message histories it keeps who
// calls it (the embedded engine): ActingAs returns a client of the same
// endpoint whose calls are recorded as made by actor. A client that wraps
// another implements it when what it wraps might.
type ActorRecorder interface {
	ActingAs(actor string) Client
}

// ActingAs returns c acting as actor, a short description of who calls (the
// listener names the connection, container and link; the SSH server the
// session's user), when c records actors; otherwise c itself, as a remote
// endpoint keeps no histories of ours.
func ActingAs(c Client, actor string) Client {
	if a, ok := c.(ActorRecorder); ok {
		return a.ActingAs(actor)
	}
	return c
}

// ResubmittedAs returns the sequence number the last resubmit of the
// message of h gave its copy, from the event's Detail ("resubmitted as
// sequence number N in TARGET", as the engine words it); ok is false when
// h records no resubmit.
func ResubmittedAs(h History) (seq int64, ok bool) {
	for i := len(h.Events) - 1; i >= 0; i-- {
		if ev := h.Events[i]; ev.Kind == EventResubmitted {
			_, err := fmt.Sscanf(ev.Detail, "resubmitted as sequence number %d", &seq)
			return seq, err == nil
		}
	}
	return 0, false
}

// HistoryOf returns the HistoryReader of c: c itself when it implements it,
// or the first client down the chain of wrapped clients (Unwrapper) that
// does. ok is true only when a client that is not a wrapper implements it
// (a wrapper's own History only passes the call on).
func HistoryOf(c Client) (hr HistoryReader, ok bool) {
	return lookThrough[HistoryReader](c, true)
}

// Summary is the event's particulars in one line, for a table or a
// timeline: the reason, the detail, the lock's expiry, and where the
// message was when not in the main queue (not the lock token, which a
// caller that wants it adds). It is not sanitized.
func (ev HistoryEvent) Summary() string {
	var parts []string
	if ev.Reason != "" {
		parts = append(parts, ev.Reason)
	}
	if ev.Detail != "" {
		parts = append(parts, ev.Detail)
	}
	if !ev.LockedUntil.IsZero() {
		parts = append(parts, "locked until "+ev.LockedUntil.UTC().Format("15:04:05.000"))
	}
	if ev.SubQueue != SubQueueMain {
		parts = append(parts, "in the "+ev.SubQueue.String())
	}
	return strings.Join(parts, "; ")
}
