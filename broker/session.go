package broker

import (
	"context"
	"time"
)

// SessionLock is a session lock a client holds on a session-aware entity.
type SessionLock struct {
	// Entity is the queue or subscription the session belongs to.
	Entity string
	// SessionID names the session.
	SessionID string
	// Token identifies the session lock.
	Token LockToken
	// LockedUntil is when the session lock expires unless it is renewed.
	LockedUntil time.Time
}

// SessionClient is implemented by clients that can receive from
// session-aware entities (RequiresSession), where a plain Receive is
// refused. A receiver first takes a session's lock, then receives that
// session's messages under it; the message locks are settled and renewed
// with Client.Settle and Client.RenewLock as usual, and they are lost with
// the session lock. Use SessionsOf to find out whether a client has it.
type SessionClient interface {
	// LockSession takes the lock of session sessionID of entity or, when
	// sessionID is "", of the unlocked session whose first available
	// message is oldest, waiting up to maxWait for one. It fails with
	// ErrSessionCannotLock when another receiver holds the session.
	LockSession(ctx context.Context, entity, sessionID string, maxWait time.Duration) (SessionLock, error)
	// ReceiveFromSession receives messages of a session this client holds
	// the lock of, in sequence order (req.Entity names the entity); it
	// fails with ErrSessionLockLost when the lock is not held.
	ReceiveFromSession(ctx context.Context, sessionID string, req ReceiveRequest) ([]*Message, error)
	// ReceiveDeferredFromSession locks deferred messages of a session this
	// client holds the lock of, by sequence number; they are settled and
	// renewed like the others, and lost with the session lock. It fails
	// with ErrSessionLockLost when the lock is not held, and with
	// ErrMessageNotFound (nothing locked) when a number names no deferred
	// message of that session.
	ReceiveDeferredFromSession(ctx context.Context, entity, sessionID string, seqs []int64) ([]*Message, error)
	// RenewSession extends a held session lock by the entity's lock
	// duration and returns the new expiry.
	RenewSession(ctx context.Context, entity, sessionID string) (time.Time, error)
	// UnlockSession gives a held session lock back; the message locks
	// taken through it are lost.
	UnlockSession(ctx context.Context, entity, sessionID string) error
	// SessionState returns a copy of the session's opaque state (nil when
	// it has none). The embedded engine reads it without a session lock;
	// an endpoint may require the lock (Service Bus gives the state only to
	// the lock holder), and then fails with ErrSessionLockLost for a
	// session this client does not hold.
	SessionState(ctx context.Context, entity, sessionID string) ([]byte, error)
}

// SessionsOf returns c as a SessionClient when c implements it and says it
// can (CanSessions); ok is false otherwise.
func SessionsOf(c Client) (sc SessionClient, ok bool) {
	sc, ok = c.(SessionClient)
	if !ok || !c.Capabilities().Supports(CanSessions) {
		return nil, false
	}
	return sc, true
}
