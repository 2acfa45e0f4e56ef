package remote

import (
	"strings"
	"sync"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// heldSession is a session lock this client holds: the receive link that
// was attached with the session filter. The lock lives as long as the link;
// detaching it gives the lock back.
type heldSession struct {
	address     string // the entity's address, as given
	sessionID   string
	token       broker.LockToken // this client's name for the lock (the endpoint sends none)
	lockedUntil time.Time
	gen         uint64 // the connection it was taken on
	rl          *receiveLink
	lostWhy     string
	lostAt      time.Time
}

// lock returns the session lock as the broker contract describes it.
func (s *heldSession) lock() broker.SessionLock {
	return broker.SessionLock{Entity: s.address, SessionID: s.sessionID, Token: s.token, LockedUntil: s.lockedUntil}
}

// heldSessions is the table of session locks this client holds, by entity
// (without regard to case) and session id.
type heldSessions struct {
	mu sync.Mutex
	m  map[string]*heldSession
}

func (h *heldSessions) init() { h.m = make(map[string]*heldSession) }

// sessionKey is the table key, and (with a prefix) the link cache key, of a
// session of an entity.
func sessionKey(address, sessionID string) string {
	return strings.ToLower(address) + "|" + sessionID
}

// live returns a copy of the held session, or an ErrSessionLockLost that
// says why it is not held.
func (h *heldSessions) live(address, sessionID string) (heldSession, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.m[sessionKey(address, sessionID)]
	switch {
	case s == nil:
		return heldSession{}, sessionLost(address, "this client holds no lock on session "+quoteSession(sessionID))
	case s.lostWhy != "":
		return heldSession{}, sessionLost(address, "the lock on session "+quoteSession(sessionID)+" is lost: "+s.lostWhy)
	}
	return *s, nil
}

// add records a session lock, replacing a lost one of the same session.
func (h *heldSessions) add(s *heldSession, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, x := range h.m {
		if x.lostWhy != "" && now.Sub(x.lostAt) > forgetLostAfter {
			delete(h.m, k)
		}
	}
	h.m[sessionKey(s.address, s.sessionID)] = s
}

// setLockedUntil records a renewal.
func (h *heldSessions) setLockedUntil(address, sessionID string, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.m[sessionKey(address, sessionID)]; s != nil && s.lostWhy == "" {
		s.lockedUntil = until
	}
}

// remove forgets a session lock (given back) and returns its link.
func (h *heldSessions) remove(address, sessionID string) *receiveLink {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := sessionKey(address, sessionID)
	s := h.m[k]
	if s == nil {
		return nil
	}
	delete(h.m, k)
	return s.rl
}

// lose marks a session lock lost and returns its link (nil when it was not
// held).
func (h *heldSessions) lose(address, sessionID, why string) *receiveLink {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.m[sessionKey(address, sessionID)]
	if s == nil || s.lostWhy != "" {
		return nil
	}
	s.lostWhy, s.lostAt = why, time.Now()
	return s.rl
}

// loseConnection marks every session lock taken on connection gen lost and
// returns how many were.
func (h *heldSessions) loseConnection(gen uint64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.m {
		if s.gen == gen && s.lostWhy == "" {
			s.lostWhy, s.lostAt = "the connection it was held on dropped", time.Now()
			n++
		}
	}
	return n
}

// sessionLost is the error of using a session lock this client does not
// hold.
func sessionLost(entity, why string) *broker.Error {
	return &broker.Error{Code: broker.CodeSessionLockLost, Message: why, Entity: entity}
}

// quoteSession quotes a session id for messages.
func quoteSession(id string) string { return `"` + id + `"` }
