package amqpserver

import (
	"context"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

// linkState is where a link is in its life.
type linkState uint8

const (
	linkAttaching linkState = iota // the answer to the peer's attach is being decided
	linkAttached
	linkDetaching // we detached with an error and wait for the peer's detach
	linkClosed
)

// linkKind says what a link carries.
type linkKind uint8

const (
	kindEntityIn  linkKind = iota // the client sends messages to an entity
	kindRequestIn                 // the client sends requests to $cbs or $management
	kindEntityOut                 // the listener delivers an entity's messages
	kindReplyOut                  // the listener delivers responses of $cbs or $management
)

// link is one attached link. Its fields are guarded by the session's
// mutex, except those a comment gives to one goroutine.
type link struct {
	s *session
	// eng is the engine acting as the link (Engine.As): what the link does
	// is recorded in the message histories as done by its connection,
	// container and name.
	eng     *engine.Engine
	name    string
	handle  uint32
	kind    linkKind
	node    nodeKind
	address string     // the normalized address of the node the link is attached to
	entity  string     // the entity address ("q", "q/$DeadLetterQueue"); that of a $management node
	replyTo string     // reply links: the target address responses are sent to
	need    sas.Rights // entity links: the right a token must keep giving (tokenGuard)

	// As the peer asked, to echo them.
	sndMode wire.Opt[wire.SenderSettleMode]
	rcvMode wire.Opt[wire.ReceiverSettleMode]
	source  *wire.Source
	target  *wire.Target

	state        linkState
	peerDetached bool // the peer detached while attaching
	closed       bool // ... with closed set
	ctx          context.Context
	cancel       context.CancelFunc

	// Incoming deliveries (the listener is the receiver).
	creditMax     uint32
	deliveryCount uint32 // deliveries the peer has sent, from its initial count
	creditLimit   uint32 // deliveryCount at which the credit we gave runs out
	inflight      int    // received deliveries whose outcome is not sent yet
	maxSize       uint64 // the largest delivery accepted (announced max-message-size)
	partial       *inDelivery
	inQ           chan *inDelivery // to the store goroutine (entity links)

	// Outgoing deliveries (the listener is the sender).
	mode       broker.ReceiveMode
	preSettled bool   // deliveries are sent settled (snd-settle-mode settled)
	credit     uint32 // deliveries the peer allows now
	outCount   uint32 // our delivery-count
	drain      bool
	flowSeq    uint64 // counts peer flows that need the deliverer to look again
	unsettled  int
	wake       chan struct{} // nudges the deliverer (capacity 1)
	waitCancel context.CancelFunc
	settleQ    *settleQueue
	sessionID  string // session receivers: the session held
	// sessionToken is the token of that session lock: the link gives back
	// its own lock only, never a newer one of the same connection.
	sessionToken broker.LockToken
	sessionful   bool
	tagSeq       uint64
	moved        uint64   // messages delivered or received on the link (Clients)
	replies      [][]byte // reply links: encoded responses waiting for credit
}

// newLink makes the link of a peer's attach, keeping what the answer
// echoes (copied: the attach aliases the read buffer).
func (s *session) newLink(a *wire.Attach) *link {
	ctx, cancel := context.WithCancel(s.c.ctx)
	return &link{
		s:       s,
		eng:     s.c.eng.As(s.c.actor(a.Name)),
		name:    a.Name,
		handle:  a.Handle,
		sndMode: a.SndSettleMode,
		rcvMode: a.RcvSettleMode,
		source:  copySource(a.Source),
		target:  copyTarget(a.Target),
		state:   linkAttaching,
		ctx:     ctx,
		cancel:  cancel,
		wake:    make(chan struct{}, 1),
	}
}

// copySource returns the parts of a source the answer echoes.
func copySource(src *wire.Source) *wire.Source {
	if src == nil {
		return nil
	}
	return &wire.Source{
		Address:          src.Address,
		Durable:          src.Durable,
		ExpiryPolicy:     src.ExpiryPolicy,
		Timeout:          src.Timeout,
		DistributionMode: src.DistributionMode,
		Filter:           copyFilter(src.Filter),
		Outcomes:         append([]wire.Symbol(nil), src.Outcomes...),
		Capabilities:     append([]wire.Symbol(nil), src.Capabilities...),
	}
}

// copyFilter keeps the filters whose values are of the simple kinds the
// listener understands (the session filter), copied. A value may be
// described (go-amqp sends filters so) or bare (rhea, the JavaScript SDK's
// AMQP library, sends the session filter as a bare string or null); the
// copy keeps the form.
func copyFilter(m wire.Map) wire.Map {
	var out wire.Map
	for _, kv := range m {
		v, d, described := kv.Value, wire.Described{}, false
		if d, described = v.(wire.Described); described {
			v = d.Value
		}
		switch v.(type) {
		case nil, string, wire.Symbol, bool, int64, uint64, int32, uint32:
		default:
			continue
		}
		if described {
			out = append(out, wire.KeyValue{Key: kv.Key, Value: wire.Described{Descriptor: d.Descriptor, Value: v}})
		} else {
			out = append(out, wire.KeyValue{Key: kv.Key, Value: v})
		}
	}
	return out
}

func copyTarget(t *wire.Target) *wire.Target {
	if t == nil {
		return nil
	}
	return &wire.Target{
		Address:      t.Address,
		Durable:      t.Durable,
		ExpiryPolicy: t.ExpiryPolicy,
		Timeout:      t.Timeout,
		Capabilities: append([]wire.Symbol(nil), t.Capabilities...),
	}
}

// incoming reports whether the peer sends on the link.
func (l *link) incoming() bool { return l.kind == kindEntityIn || l.kind == kindRequestIn }

// attachReply returns the attach that answers the peer's.
func (l *link) attachReply(role wire.Role) *wire.Attach {
	return &wire.Attach{
		Name:          l.name,
		Handle:        l.handle,
		Role:          role,
		SndSettleMode: l.sndMode,
		RcvSettleMode: l.rcvMode,
		Source:        l.source,
		Target:        l.target,
	}
}

// notify nudges the deliverer without blocking.
func (l *link) notify() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// closeLocked ends the link's work: goroutines stop, queues close, the
// reply address is freed, and the link's unsettled deliveries are
// forgotten (their locks stay valid until they expire, so the client can
// still settle them on $management). The caller holds s.mu.
func (l *link) closeLocked() {
	if l.state == linkClosed || l.state == linkDetaching {
		l.state = linkClosed
		return
	}
	l.state = linkClosed
	l.s.c.untrackLink(l)
	l.cancel()
	if l.inQ != nil {
		close(l.inQ)
		l.inQ = nil
	}
	if l.settleQ != nil {
		l.settleQ.closeLocked()
		l.settleQ = nil
	}
	if l.kind == kindReplyOut {
		l.s.c.unregisterReply(l.replyTo, l)
		l.replies = nil
	}
	if l.node == nodeCBS {
		l.s.c.releaseCBS(l)
	}
	if l.sessionful {
		l.s.c.unregisterSessionLink(l)
	}
	if l.need != 0 {
		l.s.c.unguardLink(l)
	}
	if l.unsettled > 0 {
		for id, od := range l.s.outUnsettled {
			if od.link == l {
				delete(l.s.outUnsettled, id)
			}
		}
		l.unsettled = 0
	}
	l.partial = nil
	l.notify()
	l.s.cond.Broadcast()
}

// failLocked detaches the link with an error and waits for the peer's
// detach. The caller holds s.mu.
func (l *link) failLocked(e *wire.Error) {
	if l.state != linkAttached && l.state != linkAttaching {
		return
	}
	l.s.c.logPeer("detaching a link", "link", logsafe.Clip(l.name), "address", logsafe.Clip(l.address), "condition", logsafe.Clip(string(e.Condition)), "description", logsafe.Clip(e.Description))
	l.s.sendLocked(&wire.Detach{Handle: l.handle, Closed: true, Error: e})
	l.closeLocked()
	l.state = linkDetaching
}

// fail is failLocked for link goroutines, with an engine error.
func (l *link) fail(err error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.failLocked(l.wireError(err))
}

// wireError returns err as the link's peer sees it; a refusal with a
// condition of its own (linkError) gets a tracking id like the others.
func (l *link) wireError(err error) *wire.Error {
	if pe, ok := err.(*protocolError); ok {
		e := pe.wireError()
		if pe.scope == scopeLink {
			e.Description = withTracking(e.Description, newTrackingID(), l.address, l.s.c.clock.Now())
		}
		return e
	}
	return amqpError(err, l.address, l.s.c.clock.Now())
}
