package sshserver

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// heldSession is a session lock an SSH session accepted.
type heldSession struct {
	entity    string
	sessionID string
}

// The per-session client passes the shared client's sessions through
// (broker.SessionsOf still asks the shared client's capabilities). Every SSH
// session shares the shared client's lock owner, so the wrapper itself keeps
// an SSH session to the session locks it accepted: receiving, renewing or
// releasing another one's is ErrSessionLockLost.
var _ broker.SessionClient = (*sessionClient)(nil)

// errNoSessions is returned when the shared client has no sessions.
var errNoSessions = &broker.Error{Code: broker.CodeNotSupported, Message: "this endpoint has no sessions"}

// sessions returns the shared client's session side.
func (c *sessionClient) sessions() (broker.SessionClient, error) {
	sc, ok := broker.SessionsOf(c.inner)
	if !ok {
		return nil, errNoSessions
	}
	return sc, nil
}

// holds reports whether this SSH session accepted the session lock, and
// whether the SSH session has ended.
func (c *sessionClient) holds(entity, sessionID string) (held, closed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[heldSession{entity, sessionID}], c.closed
}

// notHeld is the error for a session lock this SSH session does not hold.
func notHeld(entity, sessionID string) error {
	return &broker.Error{Code: broker.CodeSessionLockLost, Entity: entity,
		Message: "this SSH session holds no lock on session " + quote(sessionID)}
}

func quote(s string) string { return "\"" + s + "\"" }

// LockSession accepts a session through the shared client, records it and
// audits it. A lock that arrives after the SSH session ended is given back.
func (c *sessionClient) LockSession(ctx context.Context, entity, sessionID string, maxWait time.Duration) (broker.SessionLock, error) {
	sc, err := c.sessions()
	if err != nil {
		return broker.SessionLock{}, err
	}
	if !c.enter() {
		return broker.SessionLock{}, errSessionEnded
	}
	defer c.leave()
	l, err := sc.LockSession(ctx, entity, sessionID, maxWait)
	id := sessionID
	if err == nil {
		id = l.SessionID
		c.mu.Lock()
		late := c.closed
		if !late {
			c.held[heldSession{entity, l.SessionID}] = true
		}
		c.mu.Unlock()
		if late {
			c.recordSession("accept session", entity, id, nil)
			c.releaseSessions(ctx, map[heldSession]bool{{entity, l.SessionID}: true})
			return broker.SessionLock{}, errSessionEnded
		}
	}
	c.recordSession("accept session", entity, id, err)
	return l, err
}

// ReceiveFromSession receives from a session this SSH session accepted and
// records the locks.
func (c *sessionClient) ReceiveFromSession(ctx context.Context, sessionID string, req broker.ReceiveRequest) ([]*broker.Message, error) {
	sc, err := c.sessions()
	if err != nil {
		return nil, err
	}
	held, closed := c.holds(req.Entity, sessionID)
	if closed {
		return nil, errSessionEnded
	}
	if !held {
		err := notHeld(req.Entity, sessionID)
		c.recordSession("receive", req.Entity, sessionID, err)
		return nil, err
	}
	msgs, err := sc.ReceiveFromSession(ctx, sessionID, req)
	if errors.Is(err, broker.ErrSessionLockLost) {
		c.forgetSession(req.Entity, sessionID)
	}
	c.received("receive", req.Entity, msgs, err)
	return msgs, err
}

// ReceiveDeferredFromSession locks deferred messages of a session this SSH
// session accepted and records the locks, so that they are given back when
// the SSH session ends.
func (c *sessionClient) ReceiveDeferredFromSession(ctx context.Context, entity, sessionID string, seqs []int64) ([]*broker.Message, error) {
	sc, err := c.sessions()
	if err != nil {
		return nil, err
	}
	held, closed := c.holds(entity, sessionID)
	if closed {
		return nil, errSessionEnded
	}
	if !held {
		err := notHeld(entity, sessionID)
		c.recordSession("receive deferred", entity, sessionID, err)
		return nil, err
	}
	msgs, err := sc.ReceiveDeferredFromSession(ctx, entity, sessionID, seqs)
	if errors.Is(err, broker.ErrSessionLockLost) {
		c.forgetSession(entity, sessionID)
	}
	if err != nil && len(msgs) == 0 {
		// Name what was asked for, since nothing came back.
		for _, s := range seqs {
			c.record("receive deferred", entity, s, "", err, slog.String("session_id", sessionID))
		}
		return msgs, err
	}
	c.received("receive deferred", entity, msgs, err)
	return msgs, err
}

// RenewSession renews a session lock this SSH session accepted.
func (c *sessionClient) RenewSession(ctx context.Context, entity, sessionID string) (time.Time, error) {
	sc, err := c.sessions()
	if err != nil {
		return time.Time{}, err
	}
	held, closed := c.holds(entity, sessionID)
	if closed {
		return time.Time{}, errSessionEnded
	}
	var until time.Time
	if !held {
		err = notHeld(entity, sessionID)
	} else if until, err = sc.RenewSession(ctx, entity, sessionID); errors.Is(err, broker.ErrSessionLockLost) {
		c.forgetSession(entity, sessionID)
	}
	c.recordSession("renew session lock", entity, sessionID, err)
	return until, err
}

// UnlockSession releases a session lock this SSH session accepted.
func (c *sessionClient) UnlockSession(ctx context.Context, entity, sessionID string) error {
	sc, err := c.sessions()
	if err != nil {
		return err
	}
	held, closed := c.holds(entity, sessionID)
	if closed {
		return errSessionEnded
	}
	if !held {
		err = notHeld(entity, sessionID)
	} else {
		err = sc.UnlockSession(ctx, entity, sessionID)
		if err == nil || errors.Is(err, broker.ErrSessionLockLost) {
			c.forgetSession(entity, sessionID)
		}
	}
	c.recordSession("release session lock", entity, sessionID, err)
	return err
}

// SessionState reads a session's state through the shared client (no lock
// needed, nothing to audit).
func (c *sessionClient) SessionState(ctx context.Context, entity, sessionID string) ([]byte, error) {
	sc, err := c.sessions()
	if err != nil {
		return nil, err
	}
	if !c.enter() {
		return nil, errSessionEnded
	}
	defer c.leave()
	return sc.SessionState(ctx, entity, sessionID)
}

// forgetSession drops a session lock from the SSH session's record.
func (c *sessionClient) forgetSession(entity, sessionID string) {
	c.mu.Lock()
	delete(c.held, heldSession{entity, sessionID})
	c.mu.Unlock()
}

// releaseSessions gives back session locks the SSH session left behind (one
// that expired already is fine).
func (c *sessionClient) releaseSessions(ctx context.Context, sessions map[heldSession]bool) {
	sc, ok := broker.SessionsOf(c.inner)
	if !ok {
		return
	}
	keys := slices.SortedFunc(maps.Keys(sessions), func(a, b heldSession) int {
		if a.entity != b.entity {
			return strings.Compare(a.entity, b.entity)
		}
		return strings.Compare(a.sessionID, b.sessionID)
	})
	for _, h := range keys {
		err := sc.UnlockSession(ctx, h.entity, h.sessionID)
		if errors.Is(err, broker.ErrSessionLockLost) {
			err = nil
		}
		c.recordSession("release session lock", h.entity, h.sessionID, err, slog.String("cause", "session ended"))
	}
}

// heldSessions returns how many session locks the SSH session holds.
func (c *sessionClient) heldSessions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}

// recordSession writes one audit line about a session lock.
func (c *sessionClient) recordSession(op, entity, sessionID string, err error, extra ...any) {
	c.record(op, entity, 0, "", err, append([]any{slog.String("session_id", sessionID)}, extra...)...)
}
