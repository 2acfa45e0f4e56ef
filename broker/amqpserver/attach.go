package amqpserver

import (
	"context"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// Link properties and filters of the Service Bus dialect, as symbols; the
// names are package sbamqp's.
const (
	sessionFilterName       wire.Symbol = sbamqp.SessionFilter
	propLockedUntilUTC      wire.Symbol = sbamqp.PropLockedUntilUTC
	propTimeout             wire.Symbol = sbamqp.PropTimeout
	propMaxMessageBatchSize wire.Symbol = sbamqp.PropMaxMessageBatchSize
)

// defaultAcceptWait is how long a receiver that asks for the next
// available session waits when it names no timeout, as Service Bus does.
const defaultAcceptWait = time.Minute

// acceptAnswerMargin bounds how much earlier than a receiver's
// com.microsoft:timeout the listener answers that no session is free; the
// margin is a tenth of the timeout up to that bound, room for the attach
// to reach the listener and the answer the client on a loaded machine.
const acceptAnswerMargin = time.Second

// Sizes and credit of request links: a $cbs request holds a token; a
// $management request may carry several whole messages (schedule-message),
// up to managementSizeFactor times the entity's message size limit.
const (
	cbsMaxRequest        = 64 << 10
	managementOverhead   = 64 << 10
	managementSizeFactor = 4
	maxRequestCredit     = 64
)

// onAttach answers a peer's attach: a link to $cbs, a $management node or
// an entity, in either direction.
func (s *session) onAttach(a *wire.Attach) error {
	if a.Handle > s.handleMax {
		return sessionError(wire.CondNotAllowed, "attach with handle %d beyond handle-max %d", a.Handle, s.handleMax)
	}
	if _, ok := s.links[a.Handle]; ok {
		return sessionError(wire.CondHandleInUse, "attach with handle %d, which is in use", a.Handle)
	}
	if err := s.c.checkPreAuthAttach(); err != nil {
		return err
	}
	l := s.newLink(a)
	s.addLinkLocked(l)
	var err error
	if a.Role == wire.RoleSender {
		err = s.attachIncoming(l, a)
	} else {
		err = s.attachOutgoing(l, a)
	}
	if err != nil {
		s.refuseLocked(l, err)
	}
	return nil
}

// refuseLocked answers an attach with an attach without the terminus the
// peer needs, and a detach with the error, as §2.6.3 describes. The peer's
// detach ends the link.
func (s *session) refuseLocked(l *link, err error) {
	e := l.wireError(err)
	s.c.logPeer("refused a link", "link", logsafe.Clip(l.name), "address", logsafe.Clip(l.address), "condition", logsafe.Clip(string(e.Condition)), "description", logsafe.Clip(e.Description))
	var reply *wire.Attach
	if l.incoming() {
		reply = l.attachReply(wire.RoleReceiver)
		reply.Target = nil
	} else {
		reply = l.attachReply(wire.RoleSender)
		reply.Source = nil
	}
	s.sendLocked(reply)
	s.sendLocked(&wire.Detach{Handle: l.handle, Closed: true, Error: e})
	l.closeLocked()
	l.state = linkDetaching
}

// lookupEntity finds the entity of an address and checks that a token with
// the rights need covers the address (need 0: any token that covers it).
func (s *session) lookupEntity(addr, entityAddr string, need sas.Rights) (broker.Entity, error) {
	c := s.c
	if err := c.grants.check(addr, need, c.clock.Now()); err != nil {
		return broker.Entity{}, err
	}
	// The reader calls this: EntityShape never waits on the entity or the
	// store (an attach to an entity busy with a slow store read must not
	// hold up the frames of the connection's other links).
	return c.eng.EntityShape(entityAddr)
}

// entityMaxSize returns the largest message an entity takes, in bytes.
func entityMaxSize(ent broker.Entity) uint64 {
	kb := ent.Settings.MaxMessageSizeInKilobytes
	if kb <= 0 {
		kb = broker.DefaultMaxMessageSizeInKilobytes
	}
	return uint64(kb) << 10
}

// attachIncoming attaches a link on which the peer sends: to an entity, or
// requests to $cbs or $management.
func (s *session) attachIncoming(l *link, a *wire.Attach) error {
	if a.Target == nil {
		if a.Coordinator != nil {
			return broker.Errorf(broker.CodeNotSupported, "transactions are not supported")
		}
		return broker.Errorf(broker.CodeInvalid, "an attach of a sender needs a target")
	}
	l.address = normalizeAddress(a.Target.Address)
	l.node, l.entity = classify(l.address)
	l.creditMax = uint32(min(s.c.opts.MaxUnsettledPerLink, MaxSenderCredit))
	if l.node != nodeCBS && !s.c.authed.Load() {
		return errNotAuthenticated
	}
	switch l.node {
	case nodeCBS:
		l.kind = kindRequestIn
		if err := s.c.claimCBS(l); err != nil {
			return err
		}
		l.maxSize = cbsMaxRequest
		l.creditMax = min(l.creditMax, maxRequestCredit)
	case nodeManagement:
		// Each operation checks its own right (see mgmtRights).
		ent, err := s.lookupEntity(l.address, l.entity, 0)
		if err != nil {
			return err
		}
		l.kind = kindRequestIn
		l.maxSize = managementSizeFactor*entityMaxSize(ent) + managementOverhead
		l.creditMax = min(l.creditMax, maxRequestCredit)
	default:
		if l.address == "" {
			return broker.Errorf(broker.CodeInvalid, "an attach of a sender needs a target address")
		}
		ent, err := s.lookupEntity(l.address, l.entity, sas.Send)
		if err != nil {
			return err
		}
		if _, sub := broker.SplitAddress(l.entity); sub != broker.SubQueueMain {
			return linkError(wire.CondNotAllowed, "messages cannot be sent to the %s %q", sub, l.entity)
		}
		l.kind = kindEntityIn
		l.maxSize = entityMaxSize(ent)
		l.need = sas.Send
	}
	l.creditMax = max(l.creditMax, 1)
	l.state = linkAttached
	s.c.trackLink(l)
	reply := l.attachReply(wire.RoleReceiver)
	reply.MaxMessageSize = l.maxSize
	if l.kind == kindEntityIn {
		reply.Properties = wire.Map{{Key: propMaxMessageBatchSize, Value: l.maxSize}}
	}
	s.sendLocked(reply)
	l.deliveryCount = a.InitialDeliveryCount
	l.creditLimit = l.deliveryCount + l.creditMax
	if l.kind == kindEntityIn {
		l.inQ = make(chan *inDelivery, l.creditMax)
		q := l.inQ
		s.c.goSafe(func() { l.storeLoop(q) })
		s.c.guardLink(l)
	}
	s.sendLocked(l.linkFlowLocked(l.deliveryCount, l.creditMax, false))
	return nil
}

// linkFlowLocked returns a flow frame for l with the session's state.
func (l *link) linkFlowLocked(deliveryCount, credit uint32, drain bool) *wire.Flow {
	f := l.s.flowLocked()
	f.Handle = wire.Some(l.handle)
	f.DeliveryCount = wire.Some(deliveryCount)
	f.LinkCredit = wire.Some(credit)
	f.Drain = drain
	return f
}

// attachOutgoing attaches a link on which the listener sends: an entity's
// messages (peek-lock or receive-and-delete, optionally one session's), or
// the responses of $cbs or $management.
func (s *session) attachOutgoing(l *link, a *wire.Attach) error {
	l.kind = kindEntityOut
	if a.Source == nil {
		return broker.Errorf(broker.CodeInvalid, "an attach of a receiver needs a source")
	}
	l.address = normalizeAddress(a.Source.Address)
	l.node, l.entity = classify(l.address)
	l.preSettled = a.SndSettleMode.Set && a.SndSettleMode.Value == wire.SenderSettleSettled
	if l.node != nodeCBS && !s.c.authed.Load() {
		return errNotAuthenticated
	}
	if l.node != nodeEntity {
		l.kind = kindReplyOut
		if l.node == nodeCBS {
			if err := s.c.claimCBS(l); err != nil {
				return err
			}
		}
		if l.node == nodeManagement {
			if _, err := s.lookupEntity(l.address, l.entity, 0); err != nil {
				return err
			}
		}
		// The responses go to the reply-to of each request: the Go SDK
		// names it as the target address of this link; the JavaScript SDK
		// (rhea) attaches its $cbs receiver with no target and sends the
		// link's name as reply-to, which Service Bus accepts as well.
		switch {
		case a.Target != nil && a.Target.Address != "":
			l.replyTo = a.Target.Address
		case a.Name != "":
			l.replyTo = a.Name
		default:
			return broker.Errorf(broker.CodeInvalid, "a receiver of %q needs a target address or a link name to which responses are sent", l.address)
		}
		if !s.c.registerReply(l.replyTo, l) {
			return linkError(wire.CondNotAllowed, "another link receives the responses sent to %q", l.replyTo)
		}
		s.completeOutgoingLocked(l, nil)
		return nil
	}
	if l.address == "" {
		return broker.Errorf(broker.CodeInvalid, "an attach of a receiver needs a source address")
	}
	ent, err := s.lookupEntity(l.address, l.entity, sas.Listen)
	if err != nil {
		return err
	}
	if ent.Kind == broker.KindTopic {
		return linkError(wire.CondNotAllowed, "messages cannot be received from topic %q; receive from one of its subscriptions", ent.Path)
	}
	l.mode = broker.PeekLock
	if l.preSettled {
		l.mode = broker.ReceiveAndDelete
	}
	_, sub := broker.SplitAddress(l.entity)
	sid, named, sessionful, err := sessionFilter(a.Source)
	if err != nil {
		return err
	}
	switch {
	case sessionful && (sub != broker.SubQueueMain || !ent.Settings.RequiresSession):
		return linkError(wire.CondNotAllowed, "It is not possible for an entity that does not require sessions to create a sessionful message receiver: receive from %q without a session filter.", l.entity)
	case !sessionful && sub == broker.SubQueueMain && ent.Settings.RequiresSession:
		// Azure's words; the Go SDK's TestSessionReceiver_nonSessionReceiver
		// checks them, and amqp:not-allowed, which it does not retry.
		return linkError(wire.CondNotAllowed, "It is not possible for an entity that requires sessions to create a non-sessionful message receiver.")
	}
	if !sessionful {
		s.completeOutgoingLocked(l, nil)
		return nil
	}
	l.sessionful = true
	wait := defaultAcceptWait
	if ms, ok := uintProp(a.Properties, propTimeout); ok {
		// The client gives up at its timeout: answer a little before, so
		// that it gets com.microsoft:timeout rather than its own deadline.
		wait = time.Duration(ms) * time.Millisecond
		wait -= min(wait/10, acceptAnswerMargin)
	}
	s.c.goSafe(func() { l.acceptSession(sid, named, wait) })
	return nil
}

// completeOutgoingLocked answers the attach of an outgoing link and starts
// its goroutines.
func (s *session) completeOutgoingLocked(l *link, props wire.Map) {
	l.state = linkAttached
	s.c.trackLink(l)
	reply := l.attachReply(wire.RoleSender)
	reply.Properties = props
	s.sendLocked(reply)
	if l.kind != kindEntityOut {
		return
	}
	l.need = sas.Listen
	s.c.guardLink(l)
	if l.mode == broker.PeekLock {
		q := newSettleQueue()
		l.settleQ = q
		s.c.goSafe(func() { l.settleLoop(q) })
	}
	s.c.goSafe(l.deliverLoop)
}

// acceptSession takes the session lock a session receiver asks for (the
// session sessionID when named, the empty session "" included; else the
// next available session) and then answers its attach, echoing the session
// id in the source filter with the lock's expiry.
func (l *link) acceptSession(sessionID string, named bool, wait time.Duration) {
	c := l.s.c
	var lock engine.SessionLock
	var err error
	if named {
		lock, err = c.eng.AcceptNamedSession(l.ctx, c.owner, l.entity, sessionID, wait)
	} else {
		lock, err = c.eng.AcceptSession(l.ctx, c.owner, l.entity, "", wait)
	}
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.state != linkAttaching || l.peerDetached || s.done || s.ending {
		if err == nil {
			_ = c.eng.ReleaseSessionToken(context.WithoutCancel(c.ctx), c.owner, l.entity, lock.SessionID, lock.Token)
		}
		if l.peerDetached && !s.done && !s.ending {
			reply := l.attachReply(wire.RoleSender)
			reply.Source = nil
			s.sendLocked(reply)
			s.sendLocked(&wire.Detach{Handle: l.handle, Closed: l.closed})
			l.closeLocked()
			s.dropLinkLocked(l.handle)
		}
		return
	}
	if err != nil {
		s.refuseLocked(l, err)
		return
	}
	l.sessionID, l.sessionToken = lock.SessionID, lock.Token
	if l.source == nil {
		l.source = &wire.Source{Address: l.address}
	}
	l.source.Filter = echoSessionFilter(l.source.Filter, lock.SessionID)
	c.registerSessionLink(l)
	ticks := lock.LockedUntil.UnixNano()/100 + sbamqp.DotNetEpochTicks
	s.completeOutgoingLocked(l, wire.Map{{Key: propLockedUntilUTC, Value: ticks}})
}

// echoSessionFilter returns the source filter of a session receiver's
// attach answer: the client's filter with the session filter set to the
// session id it got, in the form the client asked in. go-amqp (the Go SDK)
// sends a described value (descriptor 0x137:0xC) and decodes every filter
// value as described; rhea (the JavaScript SDK) sends a bare string or null
// and compares the answer's bare value with the id it asked for, so a
// described answer there reads as "session locked by another receiver".
func echoSessionFilter(asked wire.Map, sessionID string) wire.Map {
	var value any = wire.Described{Descriptor: sbamqp.SessionFilterCode, Value: sessionID}
	if v, ok := asked.Get(string(sessionFilterName)); ok {
		if _, described := v.(wire.Described); !described {
			value = sessionID
		}
	}
	filter := wire.Map{{Key: sessionFilterName, Value: value}}
	for _, kv := range asked {
		if k, ok := filterKey(kv.Key); !ok || k != sessionFilterName {
			filter = append(filter, kv)
		}
	}
	return filter
}

// sessionFilter returns the session a receiver's source filter asks for:
// ok is false without a session filter; a null value asks for the next
// available session (named false), a string names one (named), the empty
// session "" included.
func sessionFilter(src *wire.Source) (id string, named, ok bool, err error) {
	v, ok := src.Filter.Get(string(sessionFilterName))
	if !ok {
		return "", false, false, nil
	}
	if d, isDesc := v.(wire.Described); isDesc {
		v = d.Value
	}
	switch x := v.(type) {
	case nil:
		return "", false, true, nil
	case string:
		return x, true, true, nil
	case wire.Symbol:
		return string(x), true, true, nil
	}
	return "", false, true, broker.Errorf(broker.CodeInvalid, "the session filter holds a %T; want a string session id or null", v)
}

func filterKey(k any) (wire.Symbol, bool) {
	switch x := k.(type) {
	case wire.Symbol:
		return x, true
	case string:
		return wire.Symbol(x), true
	}
	return "", false
}

// uintProp reads a non-negative integer property of any width.
func uintProp(m wire.Map, name wire.Symbol) (uint64, bool) {
	v, ok := m.Get(string(name))
	if !ok {
		return 0, false
	}
	return wire.UintValue(v)
}
