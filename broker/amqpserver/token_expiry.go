package amqpserver

import (
	"fmt"
	"sync"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sas"
)

// tokenGuard detaches the entity links of a connection whose token expired
// and was not renewed, as Service Bus does: detach with
// amqp:link:detach-forced, "The link '…' is force detached. Code:
// RenewToken. Details: Unauthorized access. 'Listen' claim(s) are required
// …". A client that puts a fresh token on $cbs before the old one expires
// keeps its links. Links authorized for the whole connection (SASL PLAIN,
// AllowAnonymous) never expire.
//
// Lock order: a session's mutex, then tokenGuard.mu; the guard's goroutine
// never holds mu while it takes a session's mutex.
type tokenGuard struct {
	mu      sync.Mutex
	links   map[*link]struct{}
	running bool
	kick    chan struct{} // capacity 1: the grants changed
}

// guardLink watches an attached entity link (the caller holds its
// session's mutex).
func (c *conn) guardLink(l *link) {
	g := &c.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.links == nil {
		g.links = make(map[*link]struct{})
		g.kick = make(chan struct{}, 1)
	}
	g.links[l] = struct{}{}
	if !g.running {
		g.running = true
		c.goSafe(c.guardLoop)
	}
}

// unguardLink forgets a link that closed.
func (c *conn) unguardLink(l *link) {
	g := &c.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.links, l)
}

// tokensChanged tells the guard that a token was put.
func (c *conn) tokensChanged() {
	g := &c.guard
	g.mu.Lock()
	kick := g.kick
	g.mu.Unlock()
	if kick != nil {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
}

// guardLoop wakes when the next token expires and detaches the links no
// valid token covers any more. It looks at the expiries after its last
// check, so a clock that jumped past one while it was busy still counts.
func (c *conn) guardLoop() {
	g := &c.guard
	g.mu.Lock()
	kick := g.kick
	g.mu.Unlock()
	last := c.clock.Now()
	for {
		var fire <-chan time.Time
		var timer interface{ Stop() bool }
		if next := c.grants.nextExpiry(last); !next.IsZero() {
			d := next.Sub(c.clock.Now())
			if d <= 0 {
				last = c.clock.Now()
				c.detachExpired(last)
				continue
			}
			t := c.clock.NewTimer(d)
			fire, timer = t.Chan(), t
		}
		select {
		case <-c.ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-kick:
		case <-fire:
			last = c.clock.Now()
			c.detachExpired(last)
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// detachExpired detaches every guarded link that no valid token covers.
func (c *conn) detachExpired(now time.Time) {
	g := &c.guard
	g.mu.Lock()
	links := make([]*link, 0, len(g.links))
	for l := range g.links {
		links = append(links, l)
	}
	g.mu.Unlock()
	for _, l := range links {
		if c.grants.check(l.address, l.need, now) == nil {
			continue
		}
		// Service Bus's words, capitals and all.
		why := &broker.Error{Code: broker.CodeUnauthorized, Message: fmt.Sprintf("The link '%s' is force detached. Code: RenewToken. Details: %s",
			l.name, sas.MissingClaim(l.need, c.grants.resource(l.address)).Message)}
		e := &wire.Error{Condition: wire.CondDetachForced, Description: describe(why, l.address, now)}
		l.s.mu.Lock()
		l.failLocked(e)
		l.s.mu.Unlock()
	}
}
