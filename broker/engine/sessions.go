package engine

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// SessionLock is a held session lock, as AcceptSession returns it.
type SessionLock struct {
	Entity      string
	SessionID   string
	Token       broker.LockToken
	LockedUntil time.Time
}

// SessionInfo describes one session of a session-aware entity.
type SessionInfo struct {
	SessionID string
	// Available counts its messages that can be received now; Messages
	// counts all its messages in the main queue (locked, deferred and
	// scheduled included).
	Available   int
	Messages    int
	Locked      bool
	Owner       uint64
	Token       broker.LockToken
	LockedUntil time.Time
	// HasState says whether the session has a state (possibly empty) and
	// StateSize how long it is; StateUpdated is when it was last set (the
	// zero time when it has none, or was set by a version that did not keep
	// the time). The time is stored with the state and survives a restart.
	HasState     bool
	StateSize    int
	StateUpdated time.Time
}

// sessionEntity finds a session-aware queue or subscription.
func (e *Engine) sessionEntity(addr string) (*entity, error) {
	en, sub, err := e.lookup(addr)
	if err != nil {
		return nil, err
	}
	if sub != broker.SubQueueMain {
		return nil, newErr(broker.CodeInvalid, en.path, "a %s has no sessions", sub)
	}
	if en.kind == broker.KindTopic {
		return nil, newErr(broker.CodeInvalid, en.path, "a topic has no sessions; use one of its subscriptions")
	}
	if !en.requiresSession() {
		return nil, newErr(broker.CodeInvalid, en.path, "the entity does not require sessions")
	}
	return en, nil
}

// AcceptSession takes the session lock of a session-aware entity for owner:
// of sessionID when given (the session need not have messages yet; it fails
// with broker.ErrSessionCannotLock when another receiver holds it), or of the
// unlocked session whose first available message is oldest. With no such
// session it waits up to maxWait (honouring ctx) and then fails with
// CodeTimeout. The lock lasts the entity's LockDuration and is renewed with
// RenewSessionLock; when it expires or is released, the message locks taken
// through it are lost too. Use AcceptNamedSession for the empty session "".
func (e *Engine) AcceptSession(ctx context.Context, owner uint64, entity, sessionID string, maxWait time.Duration) (SessionLock, error) {
	if sessionID == "" {
		return e.acceptSession(ctx, owner, entity, nil, maxWait)
	}
	return e.acceptSession(ctx, owner, entity, &sessionID, maxWait)
}

// AcceptNamedSession is AcceptSession of the session named sessionID, the
// empty session "" (messages sent with an empty SessionId) included: it
// never picks another session.
func (e *Engine) AcceptNamedSession(ctx context.Context, owner uint64, entity, sessionID string, maxWait time.Duration) (SessionLock, error) {
	return e.acceptSession(ctx, owner, entity, &sessionID, maxWait)
}

// acceptSession locks session *sessionID, or the next available one when
// sessionID is nil, under en's mutex; a zero lock means none is available.
func (en *entity) acceptSession(owner uint64, sessionID *string, now int64) (SessionLock, error) {
	if err := en.receiveRefused(); err != nil {
		return SessionLock{}, err
	}
	en.use(now)
	var s *session
	if sessionID != nil {
		s = en.session(*sessionID)
		if s.isLocked() {
			return SessionLock{}, newErr(broker.CodeSessionCannotLock, en.path, "the session %q is locked by another receiver", *sessionID)
		}
	} else if f, ok := en.free.Min(); ok {
		s = f
	}
	if s == nil {
		return SessionLock{}, nil
	}
	token := en.newToken()
	en.setSessionLock(s, owner, token, lockExpiry(now, en.settings.LockDuration))
	en.noteOwner(owner)
	en.emitSession(broker.EventLocked, s.id, token, "session "+quoteID(s.id)+" accepted")
	return SessionLock{Entity: en.path, SessionID: s.id, Token: token, LockedUntil: time.Unix(0, s.lockedUntil).UTC()}, nil
}

// acceptSession is AcceptSession: of session *sessionID, or of the next
// available session when sessionID is nil.
func (e *Engine) acceptSession(ctx context.Context, owner uint64, entity string, sessionID *string, maxWait time.Duration) (SessionLock, error) {
	if err := e.enter(); err != nil {
		return SessionLock{}, err
	}
	defer e.leave()
	en, err := e.sessionEntity(entity)
	if err != nil {
		return SessionLock{}, err
	}
	var dt deadlineTimer
	defer func() {
		if dt.stop != nil {
			dt.stop()
		}
	}()
	for {
		if err := checkCtx(ctx); err != nil {
			return SessionLock{}, err
		}
		var lock SessionLock
		var w *waiter
		list := &en.waiters[broker.SubQueueMain]
		if err := e.withDue(en, func(now int64) (err error) {
			lock, err = en.acceptSession(owner, sessionID, now)
			if err != nil || !lock.Token.IsZero() {
				return err
			}
			if maxWait <= 0 {
				return newErr(broker.CodeTimeout, en.path, "no unlocked session has messages available")
			}
			if dt.c == nil {
				dt = e.newDeadline(maxWait)
			}
			w = list.add()
			return nil
		}); err != nil {
			return SessionLock{}, err
		}
		if w == nil {
			return lock, nil
		}
		r := e.block(ctx, w, dt, func() {
			en.mu.Lock() // deleted or not: the waiter goes
			defer e.release(en)
			if !list.remove(w) {
				list.wake(1) // pass the wake-up on
			}
		})
		switch r {
		case waitTimeout:
			return SessionLock{}, newErr(broker.CodeTimeout, en.path, "no unlocked session had messages available within %v", maxWait)
		case waitCancelled:
			return SessionLock{}, ctxErr(ctx.Err())
		case waitClosed:
			return SessionLock{}, errClosed()
		}
	}
}

// ReceiveSession receives messages of one session, in sequence order, for
// the owner that holds its session lock (broker.ErrSessionLockLost
// otherwise). req.Entity names the entity; Max, Mode and MaxWait work as in
// ReceiveAs. Message locks are separate locks with the entity's
// LockDuration, but they are lost with the session lock.
func (e *Engine) ReceiveSession(ctx context.Context, owner uint64, sessionID string, req broker.ReceiveRequest) ([]*broker.Message, error) {
	return copiesOf(func(sc *scratch, dst []broker.Delivery) ([]broker.Delivery, error) {
		return e.receiveSession(ctx, sc, owner, sessionID, req, dst)
	})
}

// ReceiveSessionDeliveries is ReceiveSession without copies, as
// ReceiveDeliveries is ReceiveAs: it appends the deliveries to dst.
func (e *Engine) ReceiveSessionDeliveries(ctx context.Context, owner uint64, sessionID string, req broker.ReceiveRequest, dst []broker.Delivery) ([]broker.Delivery, error) {
	sc := scratchPool.Get().(*scratch)
	defer sc.put()
	return e.receiveSession(ctx, sc, owner, sessionID, req, dst)
}

// receiveSession is ReceiveSessionDeliveries with the scratch sc.
func (e *Engine) receiveSession(ctx context.Context, sc *scratch, owner uint64, sessionID string, req broker.ReceiveRequest, dst []broker.Delivery) ([]broker.Delivery, error) {
	if err := e.enter(); err != nil {
		return dst, err
	}
	defer e.leave()
	en, sub, err := e.receivable(req)
	if err != nil {
		return dst, err
	}
	if sub != broker.SubQueueMain {
		return dst, newErr(broker.CodeInvalid, en.path, "a %s has no sessions", sub)
	}
	if !en.requiresSession() {
		return dst, newErr(broker.CodeInvalid, en.path, "the entity does not require sessions")
	}
	return e.receive(ctx, sc, en, owner, req, sub, &sessionID, dst)
}

// ReceiveSessionDeferred locks deferred messages of a session by sequence
// number, for the owner that holds the session lock.
func (e *Engine) ReceiveSessionDeferred(ctx context.Context, owner uint64, entity, sessionID string, seqs []int64) ([]*broker.Message, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	en, err := e.sessionEntity(entity)
	if err != nil {
		return nil, err
	}
	return e.receiveDeferred(ctx, en, owner, broker.SubQueueMain, seqs, &sessionID)
}

// inSessionEntity runs fn under the mutex of the session-aware entity at
// path, after what is due at now has been processed.
func (e *Engine) inSessionEntity(ctx context.Context, path string, fn func(en *entity, now int64) error) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.leave()
	en, err := e.sessionEntity(path)
	if err != nil {
		return err
	}
	return e.withDue(en, func(now int64) error { return fn(en, now) })
}

// heldSession runs fn on a session whose lock owner holds, under the entity
// mutex.
func (e *Engine) heldSession(ctx context.Context, owner uint64, path, sessionID string, fn func(en *entity, s *session, now int64) error) error {
	return e.inSessionEntity(ctx, path, func(en *entity, now int64) error {
		s := en.sessions[sessionID]
		if s == nil || !s.isLocked() || s.owner != owner {
			return errSessionLockLost(en.path, sessionID)
		}
		en.use(now)
		return fn(en, s, now)
	})
}

// RenewSessionLock extends a held session lock to now + LockDuration and
// returns the new expiry.
func (e *Engine) RenewSessionLock(ctx context.Context, owner uint64, addr, sessionID string) (time.Time, error) {
	var until time.Time
	err := e.heldSession(ctx, owner, addr, sessionID, func(en *entity, s *session, now int64) error {
		en.setSessionLock(s, owner, s.token, lockExpiry(now, en.settings.LockDuration))
		until = time.Unix(0, s.lockedUntil).UTC()
		en.emitSession(broker.EventRenewed, s.id, s.token, "session "+quoteID(s.id)+" renewed")
		return nil
	})
	return until, err
}

// ReleaseSessionToken is ReleaseSession of the session lock with that
// token only: a receiver that ends gives its own lock back, never a newer
// one that the same owner has taken for the session since (the old lock
// expired, and a new receiver of the same connection accepted the session
// again). Another token is ErrSessionLockLost and changes nothing.
func (e *Engine) ReleaseSessionToken(ctx context.Context, owner uint64, addr, sessionID string, token broker.LockToken) error {
	return e.heldSession(ctx, owner, addr, sessionID, func(en *entity, s *session, now int64) error {
		if s.token != token {
			return errSessionLockLost(en.path, sessionID)
		}
		en.loseSession(s, now, broker.EventLockLost, "session "+quoteID(s.id)+" released")
		return nil
	})
}

// ReleaseSession gives a held session lock back (the receiver closed); the
// message locks taken through it are lost.
func (e *Engine) ReleaseSession(ctx context.Context, owner uint64, addr, sessionID string) error {
	return e.heldSession(ctx, owner, addr, sessionID, func(en *entity, s *session, now int64) error {
		en.loseSession(s, now, broker.EventLockLost, "session "+quoteID(s.id)+" released")
		return nil
	})
}

// SetSessionState replaces the opaque state of a held session (nil clears
// it). The state is stored: with a durable store it survives a restart,
// whatever becomes of the session's messages, until it is set to nil, and
// SetSessionState returns once it is on disk.
func (e *Engine) SetSessionState(ctx context.Context, owner uint64, addr, sessionID string, state []byte) error {
	var p store.Pending
	err := e.heldSession(ctx, owner, addr, sessionID, func(en *entity, s *session, now int64) error {
		old, oldAt := s.state, s.stateAt
		s.stateAt = 0
		if state != nil {
			state = slices.Clone(state)
			s.stateAt = now
		}
		s.state = state
		en.batch.SetSessionState(en.id, s.id, state, s.stateAt)
		var err error
		if p, err = en.commit(); err != nil {
			s.state, s.stateAt = old, oldAt
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := p.Wait(); err != nil {
		return storeErr("store the session state", addr, err)
	}
	return nil
}

// SessionState returns a copy of a session's state (nil when it has none).
// Reading needs no session lock, so the dashboard can show it.
func (e *Engine) SessionState(ctx context.Context, path, sessionID string) ([]byte, error) {
	var state []byte
	err := e.inSessionEntity(ctx, path, func(en *entity, _ int64) error {
		if s := en.sessions[sessionID]; s != nil && s.state != nil {
			state = slices.Clone(s.state)
		}
		return nil
	})
	return state, err
}

// HeldSessionState returns a copy of the state of a session that owner
// holds the lock of (nil when it has none), as a session receiver reads it:
// a session that is not locked, or locked by another owner, is
// ErrSessionLockLost.
func (e *Engine) HeldSessionState(ctx context.Context, owner uint64, path, sessionID string) ([]byte, error) {
	var state []byte
	err := e.heldSession(ctx, owner, path, sessionID, func(_ *entity, s *session, _ int64) error {
		state = slices.Clone(s.state)
		return nil
	})
	return state, err
}

// Sessions lists the sessions of a session-aware entity that have messages,
// a lock or state, sorted by id.
func (e *Engine) Sessions(ctx context.Context, path string) ([]SessionInfo, error) {
	var out []SessionInfo
	err := e.inSessionEntity(ctx, path, func(en *entity, _ int64) error {
		out = make([]SessionInfo, 0, len(en.sessions))
		for _, s := range en.sessions {
			info := SessionInfo{
				SessionID: s.id,
				Available: s.active.Len(),
				Messages:  s.count,
				Locked:    s.isLocked(),
				Owner:     s.owner,
				Token:     s.token,
				HasState:  s.state != nil,
				StateSize: len(s.state),
			}
			if s.state != nil && s.stateAt != 0 {
				info.StateUpdated = time.Unix(0, s.stateAt).UTC()
			}
			if info.Locked {
				info.LockedUntil = time.Unix(0, s.lockedUntil).UTC()
			}
			out = append(out, info)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return strings.Compare(a.SessionID, b.SessionID) })
	return out, nil
}
