package remote

import (
	"context"
	"errors"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// Dead-letter condition of the rejected outcome (Service Bus).

// Settle settles a lock this client holds. Messages received on a link are
// settled on it (complete = accepted, abandon = modified, defer = modified
// undeliverable-here, dead-letter = rejected with com.microsoft:dead-letter);
// messages received by sequence number, or whose link or connection closed,
// through the management node's update-disposition (on Service Bus a message
// lock outlives its connection). A lock that is lost (its session lock went,
// or a generic broker's connection dropped) fails at once with
// broker.ErrLockLost.
//
// On a generic broker complete is accept, abandon is release (give back),
// dead-letter is reject, and defer is not supported.
func (c *Client) Settle(ctx context.Context, s broker.Settlement) error {
	if s.Kind > broker.Release {
		return broker.Errorf(broker.CodeInvalid, "unknown settlement %d", s.Kind)
	}
	if !c.cfg.serviceBus() && s.Kind == broker.Defer {
		return notSupported(c.caps().Reason(broker.CanDefer))
	}
	l, found, busy := c.locks.begin(s.Token)
	if busy {
		return lockLost(l.address, "another settlement of this lock is in flight")
	}
	if !found {
		if !c.cfg.serviceBus() {
			return lockLost(s.Entity, "this client holds no delivery with lock token "+s.Token.String())
		}
		// Not taken by this client (or already settled): let the endpoint
		// decide through the management node.
		ctx, cancel := c.opCtx(ctx)
		defer cancel()
		return c.updateDisposition(ctx, entityAddress(s.Entity, broker.SubQueueMain), "", s)
	}
	if l.lostWhy != "" {
		c.locks.remove(s.Token)
		l.rl.settled()
		return lockLost(l.address, l.lostWhy)
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	var err error
	switch {
	case l.rl != nil && l.byNumber:
		// Received by sequence number under a session lock: settled through
		// the management node, naming the session's link, as the SDK does.
		err = c.updateDisposition(ctx, l.address, l.rl.recv.LinkName(), s)
	case l.rl != nil:
		err = c.settleOnLink(ctx, &l, s)
	default:
		err = c.updateDisposition(ctx, l.address, "", s)
	}
	switch {
	case err == nil, broker.CodeOf(err) == broker.CodeLockLost, broker.CodeOf(err) == broker.CodeSessionLockLost:
		c.locks.remove(s.Token)
		l.rl.settled()
	case !c.cfg.serviceBus() && broker.CodeOf(err) == broker.CodeConnectionLost:
		// A generic delivery whose link is gone cannot be settled again.
		c.locks.remove(s.Token)
		l.rl.settled()
		return lockLost(l.address, "the link it was received on closed: "+err.Error())
	default:
		c.locks.end(s.Token)
	}
	return err
}

// settleOnLink settles on the receiving link. Service Bus links settle in
// mode second, so the call returns after the endpoint confirmed.
func (c *Client) settleOnLink(ctx context.Context, l *heldLock, s broker.Settlement) error {
	r := l.rl.recv
	var err error
	switch s.Kind {
	case broker.Complete:
		err = r.AcceptMessage(ctx, l.raw)
	case broker.Release:
		err = r.ReleaseMessage(ctx, l.raw)
	case broker.Abandon:
		if !c.cfg.serviceBus() {
			err = r.ReleaseMessage(ctx, l.raw)
			break
		}
		err = r.ModifyMessage(ctx, l.raw, &amqp.ModifyMessageOptions{Annotations: annotationsOf(s.PropertiesToModify)})
	case broker.Defer:
		err = r.ModifyMessage(ctx, l.raw, &amqp.ModifyMessageOptions{UndeliverableHere: true, Annotations: annotationsOf(s.PropertiesToModify)})
	case broker.DeadLetter:
		var e *amqp.Error
		if c.cfg.serviceBus() {
			info := map[string]any{broker.PropDeadLetterReason: s.Reason, broker.PropDeadLetterErrorDescription: s.Description}
			for k, v := range s.PropertiesToModify {
				w, perr := propertyToAMQP(v)
				if perr != nil {
					return broker.Errorf(broker.CodeInvalid, "property %q: %v", k, perr)
				}
				info[k] = w
			}
			e = &amqp.Error{Condition: sbamqp.CondDeadLetter, Info: info}
		}
		err = r.RejectMessage(ctx, l.raw, e)
	}
	if err == nil {
		return nil
	}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		return mapErr(err, s.Kind.String(), l.address)
	}
	if isLinkGone(err) && l.rl.sessionID != "" {
		// A session message's lock went with its session link.
		return lockLost(l.address, "the link of session "+quoteSession(l.rl.sessionID)+" it was received on closed: "+err.Error())
	}
	if isLinkGone(err) && c.cfg.serviceBus() {
		// The link closed under us; the lock is still the endpoint's to
		// judge, through the management node.
		return c.updateDisposition(ctx, l.address, "", s)
	}
	return mapErr(err, s.Kind.String(), l.address)
}

// isLinkGone reports whether err says the link, session or connection
// closed.
func isLinkGone(err error) bool {
	var (
		le *amqp.LinkError
		se *amqp.SessionError
	)
	return errors.As(err, &le) || errors.As(err, &se)
}

// annotationsOf converts properties to modify to the annotations of a
// modified outcome; values that cannot travel are dropped (abandon and
// defer still happen).
func annotationsOf(props map[string]any) amqp.Annotations {
	if len(props) == 0 {
		return nil
	}
	out := make(amqp.Annotations, len(props))
	for k, v := range props {
		if w, err := propertyToAMQP(v); err == nil {
			out[k] = w
		}
	}
	return out
}

// RenewLock renews a lock through the management node of the address it
// was received from and returns the new expiry.
func (c *Client) RenewLock(ctx context.Context, entity string, token broker.LockToken) (time.Time, error) {
	if !c.cfg.serviceBus() {
		return time.Time{}, notSupported(c.caps().Reason(broker.CanRenewLock))
	}
	address := entityAddress(entity, broker.SubQueueMain)
	if l, ok := c.locks.snapshot(token); ok {
		if l.lostWhy != "" {
			return time.Time{}, lockLost(l.address, l.lostWhy)
		}
		address = l.address
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	until, err := c.renew(ctx, address, token)
	if err != nil {
		if broker.CodeOf(err) == broker.CodeLockLost {
			c.locks.remove(token)
		}
		return time.Time{}, err
	}
	c.locks.setLockedUntil(token, until)
	return until, nil
}
