package amqpserver

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// Waits and limits of management operations.
const (
	defaultOperationWait   = time.Minute
	maxOperationWait       = 10 * time.Minute
	maxMessagesPerResponse = 1024
)

// mgmtRequest is one $management request being answered.
type mgmtRequest struct {
	ctx    context.Context
	c      *conn
	l      *link  // the request link
	entity string // the entity address the node belongs to
	assoc  string // associated-link-name: the client's link the request concerns
	body   wire.Map
}

// mgmtOp answers one operation.
type mgmtOp func(r *mgmtRequest) (*response, error)

var mgmtOps map[string]mgmtOp

func init() {
	mgmtOps = map[string]mgmtOp{
		sbamqp.OpRenewLock:          renewLock,
		sbamqp.OpPeekMessage:        peekMessage,
		sbamqp.OpReceiveBySequence:  receiveBySequence,
		sbamqp.OpUpdateDisposition:  updateDisposition,
		sbamqp.OpScheduleMessage:    scheduleMessage,
		sbamqp.OpCancelScheduled:    cancelScheduled,
		sbamqp.OpRenewSessionLock:   renewSessionLock,
		sbamqp.OpGetSessionState:    getSessionState,
		sbamqp.OpSetSessionState:    setSessionState,
		sbamqp.OpGetMessageSessions: getMessageSessions,
		sbamqp.OpAddRule:            addRule,
		sbamqp.OpRemoveRule:         removeRule,
		sbamqp.OpEnumerateRules:     enumerateRules,
	}
}

// mgmtRights is the right each operation needs: sending for schedule and
// cancel, managing for rules, listening for the rest (peek, receive,
// settle, renew, sessions). An operation not listed needs Manage.
var mgmtRights = map[string]sas.Rights{
	sbamqp.OpRenewLock: sas.Listen, sbamqp.OpPeekMessage: sas.Listen, sbamqp.OpReceiveBySequence: sas.Listen,
	sbamqp.OpUpdateDisposition: sas.Listen, sbamqp.OpScheduleMessage: sas.Send, sbamqp.OpCancelScheduled: sas.Send,
	sbamqp.OpRenewSessionLock: sas.Listen, sbamqp.OpGetSessionState: sas.Listen, sbamqp.OpSetSessionState: sas.Listen,
	sbamqp.OpGetMessageSessions: sas.Listen,
	sbamqp.OpAddRule:            sas.Manage, sbamqp.OpRemoveRule: sas.Manage, sbamqp.OpEnumerateRules: sas.Manage,
}

// rightFor returns the right op needs.
func rightFor(op string) sas.Rights {
	if r, ok := mgmtRights[op]; ok {
		return r
	}
	return sas.Manage
}

// manage answers a $management request.
func (c *conn) manage(l *link, req *broker.Message) *response {
	props := req.ApplicationProperties
	op, _ := props[sbamqp.PropOperation].(string)
	h := mgmtOps[op]
	if h == nil {
		return c.errorResponse(broker.Errorf(broker.CodeNotSupported, "operation %q is not supported", op), l.address)
	}
	if err := c.grants.check(l.address, rightFor(op), c.clock.Now()); err != nil {
		return c.errorResponse(err, l.address)
	}
	var body wire.Map
	if req.BodyKind == broker.BodyValue && len(req.Body) > 0 {
		v, err := wire.DecodeAMQPValue(req.Body)
		if err != nil {
			return c.errorResponse(broker.Errorf(broker.CodeInvalid, "the %s body is not an amqp-value: %v", op, err), l.address)
		}
		switch x := v.(type) {
		case wire.Map:
			body = x
		case nil:
		default:
			return c.errorResponse(broker.Errorf(broker.CodeInvalid, "the %s body is a %T; want a map", op, v), l.address)
		}
	}
	wait := defaultOperationWait
	for _, k := range []string{sbamqp.PropServerTimeout, sbamqp.PropVendorServerTimeout} {
		if ms, ok := wire.UintValue(props[k]); ok && ms > 0 {
			wait = min(time.Duration(ms)*time.Millisecond, maxOperationWait)
			break
		}
	}
	ctx, cancel := context.WithTimeout(c.ctx, wait)
	defer cancel()
	assoc, _ := props[sbamqp.PropAssociatedLinkName].(string)
	r := &mgmtRequest{ctx: ctx, c: c, l: l, entity: l.entity, assoc: assoc, body: body}
	resp, err := h(r)
	if err != nil {
		c.log.Debug("management operation failed", "operation", logsafe.Clip(op), "entity", logsafe.Clip(l.entity), "err", logsafe.Err(err))
		return c.errorResponse(err, l.address)
	}
	return resp
}

// noContent is the 204 answer: nothing matched.
func noContent() *response { return &response{status: 204, desc: "No Content"} }

// field returns a body field (string or symbol key).
func (r *mgmtRequest) field(name string) (any, bool) { return r.body.Get(name) }

// missing returns the error of a required field that is absent or of the
// wrong type.
func missing(name, want string, v any, present bool) error {
	if !present {
		return broker.Errorf(broker.CodeInvalid, "the request has no %q (want %s)", name, want)
	}
	return broker.Errorf(broker.CodeInvalid, "%q is a %T; want %s", name, v, want)
}

// str returns a string field; ok is false when it is absent or null.
func (r *mgmtRequest) str(name string) (string, bool, error) {
	v, ok := r.field(name)
	if !ok || v == nil {
		return "", false, nil
	}
	switch x := v.(type) {
	case string:
		return x, true, nil
	case wire.Symbol:
		return string(x), true, nil
	}
	return "", false, missing(name, "a string", v, true)
}

// integer returns an integer field of any width; ok is false when absent.
func (r *mgmtRequest) integer(name string) (int64, bool, error) {
	v, ok := r.field(name)
	if !ok || v == nil {
		return 0, false, nil
	}
	if n, ok := wire.IntValue(v); ok {
		return n, true, nil
	}
	return 0, false, missing(name, "an integer", v, true)
}

// int64s returns a required array (or list) of integers.
func (r *mgmtRequest) int64s(name string) ([]int64, error) {
	v, ok := r.field(name)
	var out []int64
	switch x := v.(type) {
	case []int64:
		out = append(out, x...)
	case []int32:
		for _, n := range x {
			out = append(out, int64(n))
		}
	case []any:
		for _, e := range x {
			n, ok := wire.IntValue(e)
			if !ok {
				return nil, missing(name, "an array of long", v, true)
			}
			out = append(out, n)
		}
	default:
		return nil, missing(name, "an array of long", v, ok)
	}
	if len(out) == 0 {
		return nil, broker.Errorf(broker.CodeInvalid, "%q is empty", name)
	}
	if len(out) > maxMessagesPerResponse {
		return nil, broker.Errorf(broker.CodeInvalid, "%q has %d entries; at most %d", name, len(out), maxMessagesPerResponse)
	}
	return out, nil
}

// lockTokens returns the required lock-tokens array (RFC 4122 order).
func (r *mgmtRequest) lockTokens() ([]broker.LockToken, error) {
	const name = sbamqp.KeyLockTokens
	v, ok := r.field(name)
	var out []broker.LockToken
	switch x := v.(type) {
	case []wire.UUID:
		for _, u := range x {
			out = append(out, broker.LockToken(u))
		}
	case []any:
		for _, e := range x {
			switch u := e.(type) {
			case wire.UUID:
				out = append(out, broker.LockToken(u))
			case string:
				t, err := broker.ParseLockToken(u)
				if err != nil {
					return nil, err
				}
				out = append(out, t)
			default:
				return nil, missing(name, "an array of uuid", v, true)
			}
		}
	case wire.UUID:
		out = append(out, broker.LockToken(x))
	default:
		return nil, missing(name, "an array of uuid", v, ok)
	}
	if len(out) == 0 {
		return nil, broker.Errorf(broker.CodeInvalid, "%q is empty", name)
	}
	if len(out) > maxMessagesPerResponse {
		return nil, broker.Errorf(broker.CodeInvalid, "%q has %d entries; at most %d", name, len(out), maxMessagesPerResponse)
	}
	return out, nil
}

// sessionID returns the session a request concerns: its session-id field,
// or the session held by the link named in associated-link-name, or the
// one session this connection holds on the entity; ok is false when none
// is found ("" with ok is the empty session).
func (r *mgmtRequest) sessionID() (sid string, ok bool, err error) {
	if sid, ok, err := r.str(sbamqp.KeySessionID); err != nil || ok {
		return sid, ok, err
	}
	sid, ok = r.c.heldSession(r.entity, r.assoc)
	return sid, ok, nil
}

// heldSession finds the session of a session receiver of this connection
// on entity: the one named assoc when it is one, else the only one; ok is
// false when there is none, or more than one.
func (c *conn) heldSession(entity, assoc string) (sid string, ok bool) {
	c.replyMu.Lock()
	defer c.replyMu.Unlock()
	if l, isLink := c.sessionLinks[assoc]; isLink && l.entity == entity {
		return l.sessionID, true
	}
	for _, l := range c.sessionLinks {
		if l.entity == entity {
			if ok && sid != l.sessionID {
				return "", false
			}
			sid, ok = l.sessionID, true
		}
	}
	return sid, ok
}

// uuidOf returns a lock token as the uuid type responses carry.
func uuidOf(t broker.LockToken) uuid.UUID { return uuid.UUID(t) }
