package engine

import "github.com/peeklock/peeklock/broker"

// session is one SessionId of a session-aware entity. It exists while it has
// messages in the main queue, is locked, has state, or has waiters.
type session struct {
	id          string
	active      *seqSet             // available messages, by sequence number
	locked      map[*entry]struct{} // its messages locked under peek-lock
	count       int                 // its messages in the main queue, any state
	token       broker.LockToken    // session lock; zero: not locked
	owner       uint64
	lockedUntil int64 // unix ns while locked
	state       []byte
	stateAt     int64 // unix ns when state was last set; 0: no state, or not known
	waiters     waitList
	freeSeq     int64 // key in entity.free while listed there; 0: not listed
	lockKey     int64 // key in entity.sessionLocks while listed there; 0: not listed
}

func sessionByFree(a, b *session) bool {
	if a.freeSeq != b.freeSeq {
		return a.freeSeq < b.freeSeq
	}
	return a.id < b.id
}

func sessionByLock(a, b *session) bool {
	if a.lockKey != b.lockKey {
		return a.lockKey < b.lockKey
	}
	return a.id < b.id
}

func (s *session) isLocked() bool { return !s.token.IsZero() }

// session returns the session with that id, creating it.
func (en *entity) session(id string) *session {
	s := en.sessions[id]
	if s == nil {
		s = &session{id: id, active: newSeqSet(), locked: make(map[*entry]struct{})}
		en.sessions[id] = s
	}
	return s
}

// refreshFree lists s in entity.free when it is unlocked and has available
// messages, keyed by its first sequence number, and unlists it otherwise.
func (en *entity) refreshFree(s *session) {
	var want int64
	if !s.isLocked() {
		if x, ok := s.active.Min(); ok {
			want = x.seq
		}
	}
	if s.freeSeq == want {
		return
	}
	if s.freeSeq != 0 {
		en.free.Delete(s)
		s.freeSeq = 0
	}
	if want != 0 {
		s.freeSeq = want
		en.free.Set(s)
		// A session became free: wake one receiver waiting to accept any session.
		en.waiters[broker.SubQueueMain].wake(1)
	}
}

// setSessionLock locks s (owner, token, until) or unlocks it (zero token).
// The locks of its messages follow (see coveredBySession): they expire with
// it.
func (en *entity) setSessionLock(s *session, owner uint64, token broker.LockToken, until int64) {
	if s.lockKey != 0 {
		en.sessionLocks.Delete(s)
		s.lockKey = 0
	}
	s.owner, s.token, s.lockedUntil = owner, token, until
	if !token.IsZero() {
		s.lockKey = until
		en.sessionLocks.Set(s)
		for x := range s.locked {
			en.lockAt.Delete(x)
			x.at = until
		}
	}
	en.refreshFree(s)
}

// coveredBySession reports whether x, locked or about to be, is a
// message of a locked session. Its lock is then the session lock (spec
// §5): it has no expiry of its own and stays out of lockAt; renewing the
// session lock renews it and its LockedUntil is the session lock's; it ends
// with the session lock (loseSession), and settling it afterwards fails
// with SessionLockLost, not MessageLockLost (see lockLost). The official
// JavaScript SDK's live tests require all of this.
func (en *entity) coveredBySession(x *entry) bool {
	if !en.sessionful(x) {
		return false
	}
	s := en.sessions[x.session]
	return s != nil && s.isLocked()
}

// lockUntil returns when a lock taken on x at now expires.
func (en *entity) lockUntil(x *entry, now int64) int64 {
	if en.coveredBySession(x) {
		return en.sessions[x.session].lockedUntil
	}
	return lockExpiry(now, en.settings.LockDuration)
}

// lockLost is the error for a lock token that is not held in sub-queue
// sub: in the main queue of a session-aware entity, where every message
// lock is a session's (see coveredBySession), the session lock that held
// it is gone (or the message was settled already): SessionLockLost, in
// Service Bus's words.
func (en *entity) lockLost(sub broker.SubQueue, token broker.LockToken) error {
	if sub == broker.SubQueueMain && en.settings.RequiresSession {
		return newErr(broker.CodeSessionLockLost, en.path,
			"%s The lock %s is not held: the session lock that covered it expired, was lost or released, or the message was already settled.", sessionLockLostText, token)
	}
	return errLockLost(en.path, sub, token)
}

// maybeDropSession forgets a session that holds nothing any more.
func (en *entity) maybeDropSession(s *session) {
	if s.count <= 0 && !s.isLocked() && s.state == nil && s.waiters.empty() && s.active.Len() == 0 && len(s.locked) == 0 {
		if s.freeSeq != 0 {
			en.free.Delete(s)
			s.freeSeq = 0
		}
		delete(en.sessions, s.id)
	}
}

// loseSession ends a session lock: its message locks are lost too (released
// under the max-delivery rule) and the session is free again.
func (en *entity) loseSession(s *session, now int64, kind broker.EventKind, reason string) {
	token := s.token
	en.setSessionLock(s, 0, broker.LockToken{}, 0)
	for x := range s.locked {
		en.release(x, now, broker.EventLockLost, reason, nil, broker.ActorBroker)
	}
	en.emitSession(kind, s.id, token, reason)
	s.waiters.wakeAll()
	en.maybeDropSession(s)
}
