package amqpserver

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// connInfo is what the connections view shows of a connection beyond its
// links: set once by the handshake, read by Clients.
type connInfo struct {
	mu        sync.Mutex // a leaf: taken alone
	at        time.Time
	container string
	user      string           // SASL PLAIN user
	links     map[*link]uint64 // attached entity links, by attach order
	nextLink  uint64
}

// setContainer records the container id of the peer's open.
func (c *conn) setContainer(id string) {
	c.info.mu.Lock()
	c.info.container = id
	c.info.mu.Unlock()
}

// setUser records the SASL PLAIN user (a key name).
func (c *conn) setUser(name string) {
	c.info.mu.Lock()
	c.info.user = name
	c.info.mu.Unlock()
}

// trackLink records an attached entity link for Clients. The caller holds
// the link's session mutex.
func (c *conn) trackLink(l *link) {
	if l.kind != kindEntityIn && l.kind != kindEntityOut {
		return
	}
	c.info.mu.Lock()
	if c.info.links == nil {
		c.info.links = make(map[*link]uint64)
	}
	c.info.nextLink++
	c.info.links[l] = c.info.nextLink
	c.info.mu.Unlock()
}

// untrackLink forgets a link that closed.
func (c *conn) untrackLink(l *link) {
	c.info.mu.Lock()
	delete(c.info.links, l)
	c.info.mu.Unlock()
}

// Clients returns a snapshot of the open connections, oldest first, with
// their entity links (broker.ClientLister). A receiver's Waiting is read
// from the engine, so that a receiver without credit while messages wait
// shows as starved.
func (s *Server) Clients(ctx context.Context) ([]broker.ClientConn, error) {
	s.mu.Lock()
	cs := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	out := make([]broker.ClientConn, 0, len(cs))
	waiting := make(map[string]int64)
	for _, c := range cs {
		cc := c.snapshot()
		for i := range cc.Links {
			l := &cc.Links[i]
			if !l.Receiver {
				continue
			}
			n, ok := waiting[l.Entity]
			if !ok {
				n = s.available(ctx, l.Entity)
				waiting[l.Entity] = n
			}
			l.Waiting = n
		}
		out = append(out, cc)
	}
	slices.SortStableFunc(out, func(a, b broker.ClientConn) int { return a.ConnectedAt.Compare(b.ConnectedAt) })
	return out, nil
}

// closedByOperator is the description of the close a connection gets when
// an operator closes it from the connections view, before the reason.
const closedByOperator = "closed by operator"

// CloseClient closes the connection whose ID (its owner id, hex) is id
// (broker.ClientCloser): the peer gets a close frame with
// amqp:connection:forced and the description "closed by operator: REASON",
// and the connection ends as on any close (DropOwner). It returns once
// the close frame is written (or a short grace has passed); CodeNotFound
// when no open connection has the id.
func (s *Server) CloseClient(ctx context.Context, id, reason string) error {
	var target *conn
	s.mu.Lock()
	for c := range s.conns {
		if fmt.Sprintf("%016x", c.owner) == id {
			target = c
			break
		}
	}
	s.mu.Unlock()
	if target == nil {
		return broker.Errorf(broker.CodeNotFound, "no open connection has the id %s (it may have closed already)", id)
	}
	desc := closedByOperator
	if reason != "" {
		desc += ": " + reason
	}
	target.log.Info("connection closed by an operator", "reason", logsafe.Clip(reason))
	done := make(chan struct{})
	go func() {
		defer close(done)
		target.terminate(&wire.Error{Condition: wire.CondConnectionForced, Description: desc})
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// available returns the messages a receiver of the address could take now:
// the active messages of the main queue, or those of a dead-letter
// sub-queue; 0 when the entity cannot be read.
func (s *Server) available(ctx context.Context, address string) int64 {
	path, sub := broker.SplitAddress(address)
	ent, err := s.eng.Entity(ctx, path)
	if err != nil {
		return 0
	}
	switch sub {
	case broker.SubQueueDeadLetter:
		return ent.Counts.DeadLettered
	case broker.SubQueueTransferDeadLetter:
		return ent.Counts.TransferDeadLettered
	}
	return ent.Counts.Active
}

// snapshot returns the connection as the connections view shows it.
func (c *conn) snapshot() broker.ClientConn {
	c.info.mu.Lock()
	cc := broker.ClientConn{
		ID:          fmt.Sprintf("%016x", c.owner),
		Remote:      remoteAddr(c.nc),
		ContainerID: c.info.container,
		User:        c.info.user,
		ConnectedAt: c.info.at,
	}
	type ordered struct {
		l *link
		n uint64
	}
	links := make([]ordered, 0, len(c.info.links))
	for l, n := range c.info.links {
		links = append(links, ordered{l, n})
	}
	c.info.mu.Unlock()
	c.grants.mu.Lock()
	cc.Authenticated = c.grants.all != 0 || len(c.grants.items) > 0
	if cc.User == "" {
		cc.User = c.grants.keyName
	}
	c.grants.mu.Unlock()
	slices.SortFunc(links, func(a, b ordered) int { return int(a.n - b.n) })
	for _, o := range links {
		if cl, ok := o.l.snapshot(); ok {
			cc.Links = append(cc.Links, cl)
		}
	}
	return cc
}

// snapshot returns the link's state under its session's mutex; ok is false
// when it closed meanwhile.
func (l *link) snapshot() (broker.ClientLink, bool) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.state != linkAttached {
		return broker.ClientLink{}, false
	}
	cl := broker.ClientLink{Name: l.name, Entity: l.entity, Moved: l.moved}
	if l.kind == kindEntityOut {
		cl.Receiver = true
		cl.Credit = l.credit
		cl.Unsettled = l.unsettled
	} else {
		cl.Credit = l.creditLimit - l.deliveryCount
		cl.Unsettled = l.inflight
	}
	return cl, true
}

// ListenerStats are the listener's gauges for metrics.
type ListenerStats struct {
	// Connections counts the open connections.
	Connections int
	// Unauthenticated counts those that hold no right yet (no SASL PLAIN
	// key, no token on $cbs, anonymous access off).
	Unauthenticated int
	// Links counts the attached links to entities.
	Links int
	// BytesIn and BytesOut count the bytes read from and written to
	// connections since the server started (AMQP frames and headers; TLS
	// and WebSocket framing not included).
	BytesIn, BytesOut uint64
}

// Stats returns the listener's gauges. It takes each connection's leaf
// mutexes briefly and no session mutex.
func (s *Server) Stats() ListenerStats {
	s.mu.Lock()
	cs := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	st := ListenerStats{Connections: len(cs), BytesIn: s.bytesIn.Load(), BytesOut: s.bytesOut.Load()}
	for _, c := range cs {
		c.info.mu.Lock()
		st.Links += len(c.info.links)
		c.info.mu.Unlock()
		c.grants.mu.Lock()
		if c.grants.all == 0 && len(c.grants.items) == 0 {
			st.Unauthenticated++
		}
		c.grants.mu.Unlock()
	}
	return st
}
