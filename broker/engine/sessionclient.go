package engine

import (
	"context"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// The engine's own broker.Client (owner 0) is a broker.SessionClient too, so
// the dashboard can lock messages of session-aware entities.
var _ broker.SessionClient = (*Engine)(nil)

// LockSession accepts a session as the engine's own client (owner 0); see
// AcceptSession.
func (e *Engine) LockSession(ctx context.Context, entity, sessionID string, maxWait time.Duration) (broker.SessionLock, error) {
	l, err := e.AcceptSession(ctx, 0, entity, sessionID, maxWait)
	if err != nil {
		return broker.SessionLock{}, err
	}
	return broker.SessionLock{Entity: l.Entity, SessionID: l.SessionID, Token: l.Token, LockedUntil: l.LockedUntil}, nil
}

// ReceiveFromSession receives from a session the engine's own client holds;
// see ReceiveSession.
func (e *Engine) ReceiveFromSession(ctx context.Context, sessionID string, req broker.ReceiveRequest) ([]*broker.Message, error) {
	return e.ReceiveSession(ctx, 0, sessionID, req)
}

// ReceiveDeferredFromSession locks deferred messages of a session the
// engine's own client holds; see ReceiveSessionDeferred.
func (e *Engine) ReceiveDeferredFromSession(ctx context.Context, entity, sessionID string, seqs []int64) ([]*broker.Message, error) {
	return e.ReceiveSessionDeferred(ctx, 0, entity, sessionID, seqs)
}

// RenewSession renews a session lock the engine's own client holds; see
// RenewSessionLock.
func (e *Engine) RenewSession(ctx context.Context, entity, sessionID string) (time.Time, error) {
	return e.RenewSessionLock(ctx, 0, entity, sessionID)
}

// UnlockSession releases a session lock the engine's own client holds; see
// ReleaseSession.
func (e *Engine) UnlockSession(ctx context.Context, entity, sessionID string) error {
	return e.ReleaseSession(ctx, 0, entity, sessionID)
}
