package broker

import (
	"context"
	"time"
)

// ReadOnly wraps c so that every operation that changes something fails with
// ErrReadOnly before it reaches the endpoint. Browsing, listing, events and
// reading a session's state pass through. The SSH server gives read-only
// sessions such a client, so the role is enforced where the operation runs,
// not only by hiding keys.
//
// The wrapper fails closed: it embeds nothing, and lists every method of
// Client and of the optional interfaces it forwards (SessionClient,
// StatusReporter, Unwrapper, ClientLister, SequenceLocker, HistoryReader,
// ResubmitRecorder, ActorRecorder), each passed through or refused by decision. A
// method added to Client stops the build until it is decided here, and a
// test checks the optional interfaces by reflection, that every method of
// the wrapper belongs to one of them, and that every function that looks
// through wrappers (Unwrapper) for an optional interface is decided.
func ReadOnly(c Client) Client { return readOnly{c} }

type readOnly struct{ c Client }

// Endpoint passes through.
func (r readOnly) Endpoint() string { return r.c.Endpoint() }

// Capabilities passes through: the dashboard disables changing keys for a
// read-only client by IsReadOnly.
func (r readOnly) Capabilities() Capabilities { return r.c.Capabilities() }

// Entities passes through.
func (r readOnly) Entities(ctx context.Context) ([]Entity, error) { return r.c.Entities(ctx) }

// Browse passes through: peeking changes nothing.
func (r readOnly) Browse(ctx context.Context, req BrowseRequest) ([]*Message, error) {
	return r.c.Browse(ctx, req)
}

// Events passes through.
func (r readOnly) Events() (<-chan Event, func()) { return r.c.Events() }

// Close passes through.
func (r readOnly) Close() error { return r.c.Close() }

func refuse(op string) error {
	return &Error{Code: CodeReadOnly, Message: op + " is not allowed in read-only mode"}
}

func (r readOnly) Receive(ctx context.Context, req ReceiveRequest) ([]*Message, error) {
	return nil, refuse("receive")
}

func (r readOnly) ReceiveDeferred(context.Context, string, []int64) ([]*Message, error) {
	return nil, refuse("receive deferred")
}

func (r readOnly) Settle(_ context.Context, s Settlement) error { return refuse(s.Kind.String()) }

func (r readOnly) RenewLock(context.Context, string, LockToken) (time.Time, error) {
	return time.Time{}, refuse("renew lock")
}

func (r readOnly) Send(context.Context, string, []*Message) error { return refuse("send") }

func (r readOnly) SendResubmitted(context.Context, string, *Message, string, int64) (int64, error) {
	return 0, refuse("resubmit")
}

func (r readOnly) NoteResubmitted(context.Context, string, int64, string, int64) error {
	return refuse("resubmit")
}

// ActingAs passes naming the caller through, still read-only.
func (r readOnly) ActingAs(actor string) Client { return readOnly{ActingAs(r.c, actor)} }

func (r readOnly) Schedule(context.Context, string, time.Time, []*Message) ([]int64, error) {
	return nil, refuse("schedule")
}

func (r readOnly) CancelScheduled(context.Context, string, []int64) error {
	return refuse("cancel scheduled")
}

func (r readOnly) Purge(context.Context, string, SubQueue) (int64, error) {
	return 0, refuse("purge")
}

// IsReadOnly reports whether c was made by ReadOnly.
func IsReadOnly(c Client) bool {
	_, ok := c.(readOnly)
	return ok
}

// State passes the wrapped client's state through.
func (r readOnly) State() string { s, _ := StatusOf(r.c); return s }

// Notice passes the wrapped client's notice through.
func (r readOnly) Notice() string { _, n := StatusOf(r.c); return n }

func (r readOnly) LockSession(context.Context, string, string, time.Duration) (SessionLock, error) {
	return SessionLock{}, refuse("accept session")
}

func (r readOnly) ReceiveFromSession(context.Context, string, ReceiveRequest) ([]*Message, error) {
	return nil, refuse("receive")
}

func (r readOnly) ReceiveDeferredFromSession(context.Context, string, string, []int64) ([]*Message, error) {
	return nil, refuse("receive deferred")
}

func (r readOnly) RenewSession(context.Context, string, string) (time.Time, error) {
	return time.Time{}, refuse("renew session lock")
}

func (r readOnly) UnlockSession(context.Context, string, string) error {
	return refuse("release session lock")
}

// SessionState passes reading a session's state through when the wrapped
// client can.
func (r readOnly) SessionState(ctx context.Context, entity, sessionID string) ([]byte, error) {
	sc, ok := SessionsOf(r.c)
	if !ok {
		return nil, &Error{Code: CodeNotSupported, Message: "this endpoint has no sessions"}
	}
	return sc.SessionState(ctx, entity, sessionID)
}

// Unwrap returns the wrapped client (see RulesOf).
func (r readOnly) Unwrap() Client { return r.c }

// Clients passes listing the connected clients through: it changes
// nothing.
func (r readOnly) Clients(ctx context.Context) ([]ClientConn, error) {
	cl, ok := ClientsOf(r.c)
	if !ok {
		return nil, &Error{Code: CodeNotSupported, Message: "this endpoint does not list its clients"}
	}
	return cl.Clients(ctx)
}

// History passes reading a message's history through: it changes
// nothing.
func (r readOnly) History(ctx context.Context, entity string, seq int64) (History, error) {
	hr, ok := HistoryOf(r.c)
	if !ok {
		return History{}, &Error{Code: CodeNotSupported, Message: "this endpoint keeps no message history"}
	}
	return hr.History(ctx, entity, seq)
}

// LockSequence is refused: a lock keeps the message from other receivers.
func (r readOnly) LockSequence(context.Context, string, []int64) ([]*Message, error) {
	return nil, refuse("lock by sequence number")
}

// CloseClient is refused: closing an application's connection changes what
// it does.
func (r readOnly) CloseClient(context.Context, string, string) error {
	return refuse("closing a connection")
}
