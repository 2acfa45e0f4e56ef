package remote

import (
	"context"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// mgmtCall runs one management operation on the $management node of
// address over the live connection. A broken link is dropped so that the
// next call makes a new one.
func (c *Client) mgmtCall(ctx context.Context, op, address string, body map[string]any) (*rpcResponse, error) {
	return c.mgmtCallLinked(ctx, op, address, "", body)
}

// mgmtCallLinked is mgmtCall for an operation that concerns one of this
// client's links (a session receiver): its name goes along as
// associated-link-name, as the SDK sends it.
func (c *Client) mgmtCallLinked(ctx context.Context, op, address, linkName string, body map[string]any) (*rpcResponse, error) {
	name := opName(op)
	cn, err := c.connFor(name, address)
	if err != nil {
		return nil, err
	}
	l, key, err := c.management(ctx, cn, address)
	if err != nil {
		return nil, mapErr(err, name, address)
	}
	props := map[string]any{sbamqp.PropOperation: op}
	if linkName != "" {
		props[sbamqp.PropAssociatedLinkName] = linkName
	}
	if dl, ok := ctx.Deadline(); ok {
		if ms := time.Until(dl).Milliseconds(); ms > 0 {
			props[sbamqp.PropServerTimeout] = uint32(ms)
		}
	}
	res, err := l.call(ctx, name, address, props, body)
	if err != nil && l.broken() {
		c.dropLink(cn, key, l)
	}
	return res, err
}

// opName is the short name of an operation, for messages.
func opName(op string) string {
	switch op {
	case sbamqp.OpPeekMessage:
		return "browse"
	case sbamqp.OpRenewLock:
		return "renew lock"
	case sbamqp.OpReceiveBySequence:
		return "receive deferred"
	case sbamqp.OpUpdateDisposition:
		return "settle"
	case sbamqp.OpScheduleMessage:
		return "schedule"
	case sbamqp.OpCancelScheduled:
		return "cancel scheduled"
	case sbamqp.OpRenewSessionLock:
		return "renew session lock"
	case sbamqp.OpGetSessionState:
		return "get session state"
	}
	return op
}

// messagesOf decodes the "messages" list of a peek or
// receive-by-sequence-number response: maps with an encoded "message" and,
// for the latter, a "lock-token".
func messagesOf(res *rpcResponse, op, address string) ([]*amqp.Message, []broker.LockToken, error) {
	if res.status == 204 {
		return nil, nil, nil
	}
	bad := func(what string) error {
		return &broker.Error{Code: broker.CodeUnknown, Message: opName(op) + ": malformed response: " + what, Entity: address}
	}
	body, ok := res.msg.Value.(map[string]any)
	if !ok {
		return nil, nil, bad("the body is not a map")
	}
	list, ok := body[sbamqp.KeyMessages].([]any)
	if !ok {
		if body[sbamqp.KeyMessages] == nil {
			return nil, nil, nil
		}
		return nil, nil, bad("messages is not a list")
	}
	msgs := make([]*amqp.Message, 0, len(list))
	tokens := make([]broker.LockToken, 0, len(list))
	for _, item := range list {
		entry, ok := item.(map[string]any)
		if !ok {
			return nil, nil, bad("an entry of messages is not a map")
		}
		raw, ok := entry[sbamqp.KeyMessage].([]byte)
		if !ok {
			return nil, nil, bad("an entry has no encoded message")
		}
		var m amqp.Message
		if err := m.UnmarshalBinary(raw); err != nil {
			return nil, nil, bad("an encoded message does not decode: " + err.Error())
		}
		msgs = append(msgs, &m)
		var tok broker.LockToken
		if u, ok := entry[sbamqp.KeyLockToken].(amqp.UUID); ok {
			tok = broker.LockToken(u)
		}
		tokens = append(tokens, tok)
	}
	return msgs, tokens, nil
}

// peek returns up to count messages of address from sequence number from.
func (c *Client) peek(ctx context.Context, address string, from int64, count int32) ([]*broker.Message, error) {
	res, err := c.mgmtCall(ctx, sbamqp.OpPeekMessage, address, map[string]any{
		sbamqp.KeyFromSequenceNumber: from,
		sbamqp.KeyMessageCount:       count,
	})
	if err != nil {
		return nil, err
	}
	raws, _, err := messagesOf(res, sbamqp.OpPeekMessage, address)
	if err != nil {
		return nil, err
	}
	out := make([]*broker.Message, len(raws))
	for i, r := range raws {
		m := fromAMQP(r)
		// A peek carries no lock: whatever the encoded message says, the
		// peeked copy is not locked by this client.
		m.LockToken = broker.LockToken{}
		m.SubQueue = subQueueOf(address)
		out[i] = m
	}
	return out, nil
}

// renew renews one lock and returns its new expiry.
func (c *Client) renew(ctx context.Context, address string, token broker.LockToken) (time.Time, error) {
	res, err := c.mgmtCall(ctx, sbamqp.OpRenewLock, address, map[string]any{
		sbamqp.KeyLockTokens: []amqp.UUID{amqp.UUID(token)},
	})
	if err != nil {
		return time.Time{}, err
	}
	body, _ := res.msg.Value.(map[string]any)
	exps, ok := body[sbamqp.KeyExpirations].([]time.Time)
	if !ok || len(exps) != 1 {
		return time.Time{}, &broker.Error{Code: broker.CodeUnknown, Message: "renew lock: malformed response: no expiration", Entity: address}
	}
	return exps[0].UTC(), nil
}

// receiveBySequence locks messages by sequence number. For deferred
// messages of a session, sessionID names it and linkName is its session
// receiver link (associated-link-name); both are "" otherwise.
func (c *Client) receiveBySequence(ctx context.Context, address, linkName, sessionID string, seqs []int64) ([]*broker.Message, error) {
	body := map[string]any{
		sbamqp.KeySequenceNumbers:    seqs,
		sbamqp.KeyReceiverSettleMode: uint32(1),
	}
	if sessionID != "" {
		body[sbamqp.KeySessionID] = sessionID
	}
	res, err := c.mgmtCallLinked(ctx, sbamqp.OpReceiveBySequence, address, linkName, body)
	if err != nil {
		return nil, err
	}
	raws, tokens, err := messagesOf(res, sbamqp.OpReceiveBySequence, address)
	if err != nil {
		return nil, err
	}
	out := make([]*broker.Message, len(raws))
	for i, r := range raws {
		m := fromAMQP(r)
		m.DeliveryCount = max(m.DeliveryCount, 1)
		if tokens[i] != (broker.LockToken{}) {
			m.LockToken = tokens[i]
		}
		if m.LockToken.IsZero() {
			return nil, &broker.Error{Code: broker.CodeUnknown, Message: "receive deferred: the endpoint sent a message without a lock token", Entity: address}
		}
		out[i] = m
	}
	return out, nil
}

// updateDisposition settles a lock through the management node; linkName,
// when not "", is the receiver link the lock belongs to (a session
// receiver's, for deferred messages received through it), sent as
// associated-link-name the way the SDK settles deferred messages.
func (c *Client) updateDisposition(ctx context.Context, address, linkName string, s broker.Settlement) error {
	body := map[string]any{
		sbamqp.KeyLockTokens: []amqp.UUID{amqp.UUID(s.Token)},
	}
	switch s.Kind {
	case broker.Complete:
		body[sbamqp.KeyDispositionStatus] = sbamqp.DispositionCompleted
	case broker.Abandon, broker.Release:
		// $management has no release: abandon is the nearest.
		body[sbamqp.KeyDispositionStatus] = sbamqp.DispositionAbandoned
	case broker.Defer:
		body[sbamqp.KeyDispositionStatus] = sbamqp.DispositionDeferred
	case broker.DeadLetter:
		body[sbamqp.KeyDispositionStatus] = sbamqp.DispositionSuspended
		body[sbamqp.KeyDeadLetterReason] = s.Reason
		body[sbamqp.KeyDeadLetterDescription] = s.Description
	default:
		return broker.Errorf(broker.CodeInvalid, "unknown settlement %d", s.Kind)
	}
	if len(s.PropertiesToModify) > 0 && s.Kind != broker.Complete {
		props, err := amqpProps(s.PropertiesToModify)
		if err != nil {
			return err
		}
		body[sbamqp.KeyPropertiesToModify] = props
	}
	_, err := c.mgmtCallLinked(ctx, sbamqp.OpUpdateDisposition, address, linkName, body)
	return err
}

// amqpProps converts properties to modify.
func amqpProps(in map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(in))
	for k, v := range in {
		w, err := propertyToAMQP(v)
		if err != nil {
			return nil, broker.Errorf(broker.CodeInvalid, "property %q: %v", k, err)
		}
		out[k] = w
	}
	return out, nil
}

// scheduleMessages schedules messages for at and returns their sequence
// numbers.
func (c *Client) scheduleMessages(ctx context.Context, address string, at time.Time, msgs []*broker.Message) ([]int64, error) {
	list := make([]any, 0, len(msgs))
	for _, m := range msgs {
		cp := m.Clone()
		cp.ScheduledEnqueueTime = at
		if cp.MessageID == "" {
			cp.MessageID = uuid.NewString()
		}
		am, err := toAMQP(cp)
		if err != nil {
			return nil, err
		}
		enc, err := am.MarshalBinary()
		if err != nil {
			return nil, broker.Errorf(broker.CodeInvalid, "schedule: encoding message %q: %v", cp.MessageID, err)
		}
		entry := map[string]any{sbamqp.KeyMessageID: cp.MessageID, sbamqp.KeyMessage: enc}
		if cp.SessionID != "" {
			entry[sbamqp.KeySessionID] = cp.SessionID
		}
		if cp.PartitionKey != "" {
			entry[sbamqp.KeyPartitionKey] = cp.PartitionKey
		}
		if cp.ViaPartitionKey != "" {
			entry[sbamqp.KeyViaPartitionKey] = cp.ViaPartitionKey
		}
		list = append(list, entry)
	}
	res, err := c.mgmtCall(ctx, sbamqp.OpScheduleMessage, address, map[string]any{sbamqp.KeyMessages: list})
	if err != nil {
		return nil, err
	}
	body, _ := res.msg.Value.(map[string]any)
	seqs, ok := body[sbamqp.KeySequenceNumbers].([]int64)
	if !ok || len(seqs) != len(msgs) {
		return nil, &broker.Error{Code: broker.CodeUnknown, Message: "schedule: malformed response: sequence-numbers missing or of the wrong length", Entity: address}
	}
	return seqs, nil
}

// cancelScheduled cancels scheduled messages by sequence number.
func (c *Client) cancelScheduled(ctx context.Context, address string, seqs []int64) error {
	_, err := c.mgmtCall(ctx, sbamqp.OpCancelScheduled, address, map[string]any{sbamqp.KeySequenceNumbers: seqs})
	return err
}
