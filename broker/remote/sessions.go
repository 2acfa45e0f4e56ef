package remote

import (
	"context"
	"math"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// sessionLinkPrefix starts the link cache key of a session receiver; the
// cache never evicts keys that start with "session|".
const sessionLinkPrefix = "session|lock|"

var _ broker.SessionClient = (*Client)(nil)

// sessionAddress checks a session operation's entity and returns its
// address.
func (c *Client) sessionAddress(op, entity string) (string, error) {
	if !c.cfg.serviceBus() {
		return "", notSupported(c.caps().Reason(broker.CanSessions))
	}
	if entity == "" {
		return "", broker.Errorf(broker.CodeInvalid, "%s: no entity given", op)
	}
	address := entityAddress(entity, broker.SubQueueMain)
	if sub := subQueueOf(address); sub != broker.SubQueueMain {
		return "", &broker.Error{Code: broker.CodeInvalid, Message: op + ": a " + sub.String() + " has no sessions", Entity: address}
	}
	return address, nil
}

// LockSession takes a session lock the way Service Bus session receivers
// do: it attaches a peek-lock receive link whose source carries the
// com.microsoft:session-filter, naming the session or, for sessionID "",
// null (the next available session, waited for up to maxWait, which goes to
// the endpoint as com.microsoft:timeout). The endpoint answers with the
// session id in the filter and the expiry in com.microsoft:locked-until-utc;
// it refuses a session another receiver holds with
// com.microsoft:session-cannot-be-locked (broker.ErrSessionCannotLock) and
// a wait that found no session with com.microsoft:timeout
// (broker.CodeTimeout, as the embedded engine). The lock lasts as long as
// the link: UnlockSession detaches it, and a dropped connection loses it.
// The endpoint names no session lock token, so Token is this client's own.
func (c *Client) LockSession(ctx context.Context, entity, sessionID string, maxWait time.Duration) (broker.SessionLock, error) {
	const op = "lock session"
	address, err := c.sessionAddress(op, entity)
	if err != nil {
		return broker.SessionLock{}, err
	}
	if sessionID != "" {
		if hs, err := c.sessions.live(address, sessionID); err == nil {
			if hs.lockedUntil.IsZero() || hs.lockedUntil.After(c.clock.Now()) {
				return broker.SessionLock{}, &broker.Error{Code: broker.CodeSessionCannotLock,
					Message: "this client holds the lock on session " + quoteSession(sessionID) + " already", Entity: address}
			}
			// Expired by now (the endpoint has detached the link, or will):
			// give it back and take it anew.
			if rl := c.sessions.lose(address, sessionID, "it expired"); rl != nil {
				c.closeSessionLink(ctx, rl)
			}
		}
	}
	bound := c.cfg.Timeout
	if sessionID == "" {
		bound += max(maxWait, 0)
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	cn, err := c.connFor(op, address)
	if err != nil {
		return broker.SessionLock{}, err
	}
	if err := c.ensureClaim(ctx, cn, address); err != nil {
		return broker.SessionLock{}, mapErr(err, op, address)
	}
	opts := &amqp.ReceiverOptions{Credit: -1, SettlementMode: amqp.ReceiverSettleModeSecond.Ptr()}
	if sessionID == "" {
		opts.Filters = []amqp.LinkFilter{amqp.NewLinkFilter(sbamqp.SessionFilter, sbamqp.SessionFilterCode, nil)}
		opts.Properties = map[string]any{sbamqp.PropTimeout: waitMillis(maxWait)}
	} else {
		opts.Filters = []amqp.LinkFilter{amqp.NewLinkFilter(sbamqp.SessionFilter, sbamqp.SessionFilterCode, sessionID)}
	}
	sess, err := cn.amqp.NewSession(ctx, nil)
	if err != nil {
		return broker.SessionLock{}, mapErr(err, op, address)
	}
	r, err := sess.NewReceiver(ctx, address, opts)
	if err != nil {
		go closeQuietly(sess)
		return broker.SessionLock{}, mapErr(err, op, address)
	}
	got, ok := r.LinkSourceFilterValue(sbamqp.SessionFilter).(string)
	if !ok || (sessionID != "" && got != sessionID) {
		go closeQuietly(sess)
		return broker.SessionLock{}, &broker.Error{Code: broker.CodeUnknown,
			Message: "lock session: the endpoint attached the link without the session id in its session filter", Entity: address}
	}
	key := sessionLinkPrefix + sessionKey(address, got)
	rl := &receiveLink{key: key, address: address, mode: broker.PeekLock, session: sess, recv: r, sessionID: got}
	if !cn.adopt(key, rl) {
		go rl.close()
		return broker.SessionLock{}, &broker.Error{Code: broker.CodeSessionCannotLock,
			Message: "this client holds the lock on session " + quoteSession(got) + " already", Entity: address}
	}
	hs := &heldSession{address: address, sessionID: got, token: broker.LockToken(uuid.New()), gen: cn.gen, rl: rl}
	if ticks, ok := r.Properties()[sbamqp.PropLockedUntilUTC].(int64); ok {
		hs.lockedUntil = ticksToTime(ticks)
	}
	c.sessions.add(hs, c.clock.Now())
	return hs.lock(), nil
}

// waitMillis is maxWait in whole milliseconds for com.microsoft:timeout,
// at least 1 (0 would have the endpoint wait its default minute).
func waitMillis(maxWait time.Duration) uint32 {
	ms := maxWait.Milliseconds()
	switch {
	case ms < 1:
		return 1
	case ms > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(ms)
}

// ticksToTime converts .NET ticks since 0001-01-01 to a UTC time.
func ticksToTime(ticks int64) time.Time {
	return time.Unix(0, (ticks-sbamqp.DotNetEpochTicks)*100).UTC()
}

// heldSessionOn returns the address of entity (see sessionAddress), the
// held session of it and the live connection it was taken on, or
// ErrSessionLockLost when the lock is not held there.
func (c *Client) heldSessionOn(op, entity, sessionID string) (string, heldSession, *connection, error) {
	address, err := c.sessionAddress(op, entity)
	if err != nil {
		return "", heldSession{}, nil, err
	}
	hs, err := c.sessions.live(address, sessionID)
	if err != nil {
		return "", heldSession{}, nil, err
	}
	cn, err := c.connFor(op, address)
	if err != nil {
		if broker.CodeOf(err) == broker.CodeConnectionLost {
			c.sessions.lose(address, sessionID, "the connection it was held on dropped")
			return "", heldSession{}, nil, sessionLost(address, "the lock on session "+quoteSession(sessionID)+" is lost: "+err.Error())
		}
		return "", heldSession{}, nil, err
	}
	if cn.gen != hs.gen {
		c.sessions.lose(address, sessionID, "the connection it was held on dropped")
		return "", heldSession{}, nil, sessionLost(address, "the lock on session "+quoteSession(sessionID)+" is lost: the connection it was held on dropped")
	}
	return address, hs, cn, nil
}

// ReceiveFromSession receives on the link of a held session with exactly
// req.Max credit, drained after the call like Receive. Peek-lock messages
// are held and settled on that link (Settle) or renewed (RenewLock); they
// are lost with the session lock. The link is a peek-lock link, so
// receive-and-delete completes each message before handing it over; a
// message whose completion fails is handed over still locked, with its lock
// token.
func (c *Client) ReceiveFromSession(ctx context.Context, sessionID string, req broker.ReceiveRequest) ([]*broker.Message, error) {
	const op = "receive from session"
	if req.Max <= 0 || req.Max > MaxReceive {
		return nil, broker.Errorf(broker.CodeInvalid, "a receive asks for 1 to %d messages (Max is %d)", MaxReceive, req.Max)
	}
	if req.Mode != broker.PeekLock && req.Mode != broker.ReceiveAndDelete {
		return nil, broker.Errorf(broker.CodeInvalid, "unknown receive mode %d", req.Mode)
	}
	if req.SubQueue != broker.SubQueueMain {
		return nil, broker.Errorf(broker.CodeInvalid, "%s: a %s has no sessions", op, req.SubQueue)
	}
	address, hs, cn, err := c.heldSessionOn(op, req.Entity, sessionID)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	rl := hs.rl
	raws, err := c.fetch(ctx, cn, rl, req.Max, req.MaxWait)
	if err != nil && len(raws) == 0 {
		e := mapErr(err, op, address)
		if !c.linkAlive(cn, rl.key, rl) && broker.CodeOf(e) != broker.CodeSessionLockLost {
			be, _ := e.(*broker.Error)
			return nil, sessionLost(address, "the lock on session "+quoteSession(sessionID)+" is lost: its link closed: "+be.Message)
		}
		return nil, e
	}
	out := make([]*broker.Message, 0, len(raws))
	now := c.clock.Now()
	for _, raw := range raws {
		m := received(raw)
		m.SubQueue = broker.SubQueueMain
		if req.Mode == broker.ReceiveAndDelete && rl.recv.AcceptMessage(ctx, raw) == nil {
			m.LockToken, m.LockedUntil = broker.LockToken{}, time.Time{}
		} else if !m.LockToken.IsZero() {
			c.locks.add(&heldLock{token: m.LockToken, address: address, gen: cn.gen, rl: rl, raw: raw, msg: m.Clone()}, now)
		}
		out = append(out, m)
	}
	return out, nil
}

// ReceiveDeferredFromSession locks deferred messages of a held session by
// sequence number with the entity's com.microsoft:receive-by-sequence-number,
// naming the session (session-id) and its link (associated-link-name). The
// locks are settled through the management node naming that link, as the
// SDK settles deferred messages, and are lost with the session lock.
func (c *Client) ReceiveDeferredFromSession(ctx context.Context, entity, sessionID string, seqs []int64) ([]*broker.Message, error) {
	const op = "receive deferred from session"
	if len(seqs) == 0 {
		return nil, broker.Errorf(broker.CodeInvalid, "%s: no sequence numbers given", op)
	}
	address, hs, cn, err := c.heldSessionOn(op, entity, sessionID)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	msgs, err := c.receiveBySequence(ctx, address, hs.rl.recv.LinkName(), sessionID, seqs)
	if err != nil {
		if broker.CodeOf(err) == broker.CodeSessionLockLost {
			c.dropSession(address, sessionID, err.Error())
		}
		return nil, err
	}
	now := c.clock.Now()
	for _, m := range msgs {
		m.SubQueue = broker.SubQueueMain
		c.locks.add(&heldLock{token: m.LockToken, address: address, gen: cn.gen, rl: hs.rl, byNumber: true, msg: m.Clone()}, now)
	}
	if _, err := c.sessions.live(address, sessionID); err != nil {
		// The session lock went while the call ran: so did these locks.
		c.locks.loseLink(hs.rl, false)
	}
	return msgs, nil
}

// RenewSession renews a held session lock with the entity's
// com.microsoft:renew-session-lock (naming the session link as the
// associated link) and returns the new expiry.
func (c *Client) RenewSession(ctx context.Context, entity, sessionID string) (time.Time, error) {
	const op = "renew session lock"
	address, hs, _, err := c.heldSessionOn(op, entity, sessionID)
	if err != nil {
		return time.Time{}, err
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	res, err := c.mgmtCallLinked(ctx, sbamqp.OpRenewSessionLock, address, hs.rl.recv.LinkName(), map[string]any{sbamqp.KeySessionID: sessionID})
	if err != nil {
		if broker.CodeOf(err) == broker.CodeSessionLockLost {
			c.dropSession(address, sessionID, err.Error())
		}
		return time.Time{}, err
	}
	body, _ := res.msg.Value.(map[string]any)
	until, ok := body[sbamqp.KeyExpiration].(time.Time)
	if !ok {
		return time.Time{}, &broker.Error{Code: broker.CodeUnknown, Message: op + ": malformed response: no expiration", Entity: address}
	}
	until = until.UTC()
	c.sessions.setLockedUntil(address, sessionID, until)
	return until, nil
}

// UnlockSession gives a held session lock back by detaching its link; the
// message locks taken through it are lost. A lock that was lost already
// is forgotten, and reported as broker.ErrSessionLockLost.
func (c *Client) UnlockSession(ctx context.Context, entity, sessionID string) error {
	const op = "unlock session"
	address, err := c.sessionAddress(op, entity)
	if err != nil {
		return err
	}
	_, lostErr := c.sessions.live(address, sessionID)
	rl := c.sessions.remove(address, sessionID)
	if rl != nil {
		c.closeSessionLink(ctx, rl)
	}
	return lostErr
}

// dropSession marks a session lock lost, with the message locks taken
// through it, and detaches its link.
func (c *Client) dropSession(address, sessionID, why string) {
	if rl := c.sessions.lose(address, sessionID, why); rl != nil {
		go c.closeSessionLink(context.Background(), rl)
	}
}

// closeSessionLink loses the message locks of a session link, takes it out
// of the link cache and detaches it (which gives the session lock back),
// waiting for the endpoint to confirm within the close timeout.
func (c *Client) closeSessionLink(ctx context.Context, rl *receiveLink) {
	c.locks.loseLink(rl, false)
	if cn := c.currentConn(); cn != nil {
		cn.mu.Lock()
		if s, ok := cn.links[rl.key]; ok && s.link == rl {
			delete(cn.links, rl.key)
		}
		cn.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	rl.closeOnce.Do(func() {
		_ = rl.recv.Close(ctx)
		_ = rl.session.Close(ctx)
	})
}

// SessionState reads a held session's state with
// com.microsoft:get-session-state. Service Bus gives a session's state only
// to the holder of its lock, so for a session this client does not hold it
// fails with broker.ErrSessionLockLost without asking.
func (c *Client) SessionState(ctx context.Context, entity, sessionID string) ([]byte, error) {
	const op = "get session state"
	address, hs, _, err := c.heldSessionOn(op, entity, sessionID)
	if err != nil {
		if be, ok := err.(*broker.Error); ok && be.Code == broker.CodeSessionLockLost {
			be.Message += " (Service Bus gives a session's state only to the holder of its lock)"
		}
		return nil, err
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	res, err := c.mgmtCallLinked(ctx, sbamqp.OpGetSessionState, address, hs.rl.recv.LinkName(), map[string]any{sbamqp.KeySessionID: sessionID})
	if err != nil {
		if broker.CodeOf(err) == broker.CodeSessionLockLost {
			c.dropSession(address, sessionID, err.Error())
		}
		return nil, err
	}
	if res.status == 204 {
		return nil, nil
	}
	body, ok := res.msg.Value.(map[string]any)
	if !ok {
		return nil, &broker.Error{Code: broker.CodeUnknown, Message: op + ": malformed response: the body is not a map", Entity: address}
	}
	switch v := body[sbamqp.KeySessionState].(type) {
	case nil:
		return nil, nil
	case []byte:
		return append([]byte(nil), v...), nil
	default:
		return nil, &broker.Error{Code: broker.CodeUnknown, Message: op + ": malformed response: session-state is not binary", Entity: address}
	}
}
