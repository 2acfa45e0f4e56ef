package amqpserver

import (
	"fmt"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// What a connection may hold before it authenticates: the SDKs put their
// first token on a $cbs link pair in one session before they attach
// anything else, so a few sessions and links leave room for a client that
// retries, and a peer that holds more is closed.
const (
	preAuthMaxSessions = 4
	preAuthMaxLinks    = 8
)

// errNotAuthenticated refuses a link other than $cbs before the connection
// has authenticated.
var errNotAuthenticated = broker.Errorf(broker.CodeUnauthorized,
	"the connection has not authenticated: put a token on $cbs first, or use SASL PLAIN with a key")

// admitLocked decides whether a new connection may be served: a connection
// beyond MaxUnauthenticated closes the oldest unauthenticated one (a cap
// that refused the newcomer instead would let a few peers that never
// authenticate lock every client out until their deadline, and again
// after it); a connection beyond MaxConnections, counting those being
// closed as gone, is refused. The caller holds s.mu.
func (s *Server) admitLocked() bool {
	if !s.opts.AllowAnonymous && len(s.pending) >= s.opts.MaxUnauthenticated {
		var oldest *conn
		for c := range s.pending {
			if oldest == nil || c.seq < oldest.seq {
				oldest = c
			}
		}
		s.dropPendingLocked(oldest)
		s.logRefusal("closing the oldest unauthenticated connection: too many have not authenticated",
			"remote", remoteAddr(oldest.nc), "max-unauthenticated", s.opts.MaxUnauthenticated)
		go oldest.terminate(&wire.Error{Condition: wire.CondResourceLimitExceeded,
			Description: fmt.Sprintf("more than %d connections have not authenticated; the oldest of them is closed", s.opts.MaxUnauthenticated)})
	}
	return len(s.conns)-s.leaving < s.opts.MaxConnections
}

// dropPendingLocked takes c out of the unauthenticated connections to close
// it; it counts as gone from then on. The caller holds s.mu.
func (s *Server) dropPendingLocked(c *conn) {
	delete(s.pending, c)
	c.dropped = true
	s.leaving++
}

// dropIfPending takes c out of the unauthenticated connections when it is
// still one, and reports whether it was.
func (s *Server) dropIfPending(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[c]; !ok {
		return false
	}
	s.dropPendingLocked(c)
	return true
}

// authenticated moves c out of the unauthenticated connections; it reports
// false when c is being closed for lack of authentication already.
func (s *Server) authenticated(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.dropped {
		return false
	}
	delete(s.pending, c)
	return true
}

// Unauthenticated returns the number of open connections that have not
// authenticated yet.
func (s *Server) Unauthenticated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// authenticate records that the peer proved it holds a key (SASL PLAIN, or
// a valid token put on $cbs): the deadline no longer applies and every
// link may attach (each still needs a token that covers it).
func (c *conn) authenticate() {
	if c.authed.Load() || !c.srv.authenticated(c) {
		return
	}
	c.authed.Store(true)
	if c.authTimer != nil {
		c.authTimer.Stop()
	}
}

// armAuthDeadline closes the connection when it has not authenticated
// within the AuthTimeout.
func (c *conn) armAuthDeadline() {
	d := c.opts.AuthTimeout
	if d <= 0 || c.authed.Load() {
		return
	}
	c.authTimer = c.clock.AfterFunc(d, func() {
		if c.authed.Load() || !c.srv.dropIfPending(c) {
			return
		}
		c.log.Info("closing a connection that did not authenticate in time", "auth-timeout", d)
		go c.terminate(&wire.Error{Condition: wire.CondUnauthorizedAccess,
			Description: fmt.Sprintf("the connection did not authenticate within %v: put a token on $cbs, or use SASL PLAIN with a key", d)})
	})
}

// checkPreAuthBegin refuses a session beyond what an unauthenticated
// connection may hold.
func (c *conn) checkPreAuthBegin() error {
	if c.authed.Load() || len(c.sessions) < preAuthMaxSessions {
		return nil
	}
	return connError(wire.CondResourceLimitExceeded, "a connection that has not authenticated may have at most %d sessions: put a token on $cbs first", preAuthMaxSessions)
}

// checkPreAuthAttach refuses a link beyond what an unauthenticated
// connection may hold (refused links count until the peer detaches them).
func (c *conn) checkPreAuthAttach() error {
	if c.authed.Load() || c.links.Load() < preAuthMaxLinks {
		return nil
	}
	return connError(wire.CondResourceLimitExceeded, "a connection that has not authenticated may have at most %d links: put a token on $cbs first", preAuthMaxLinks)
}
