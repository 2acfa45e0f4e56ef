package amqpserver

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// maxPeekRounds bounds the browse windows one session-filtered peek reads.
const maxPeekRounds = 16

// renewLock renews message locks: lock-tokens -> expirations.
func renewLock(r *mgmtRequest) (*response, error) {
	tokens, err := r.lockTokens()
	if err != nil {
		return nil, err
	}
	times, err := r.l.eng.RenewLocks(r.ctx, r.entity, tokens)
	if err != nil {
		return nil, err
	}
	return okResponse(map[string]any{sbamqp.KeyExpirations: times}), nil
}

// peekMessage returns up to message-count messages with sequence numbers
// from from-sequence-number on, in every state (active, locked, deferred,
// scheduled; or the dead-letter sub-queue), without locking them. 204 when
// there are none.
func peekMessage(r *mgmtRequest) (*response, error) {
	from, _, err := r.integer(sbamqp.KeyFromSequenceNumber)
	if err != nil {
		return nil, err
	}
	count, ok, err := r.integer(sbamqp.KeyMessageCount)
	if err != nil {
		return nil, err
	}
	if !ok || count <= 0 {
		count = 1
	}
	count = min(count, maxMessagesPerResponse)
	sid, inSession, err := r.str(sbamqp.KeySessionID)
	if err != nil {
		return nil, err
	}
	if !inSession && r.assoc != "" {
		sid, inSession = r.c.heldSession(r.entity, r.assoc)
	}
	var session *string
	if inSession {
		session = &sid
	}
	msgs, err := r.c.peek(r.ctx, r.entity, max(from, 0), int(count), session)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return noContent(), nil
	}
	list := make([]any, len(msgs))
	for i, m := range msgs {
		list[i] = map[string]any{sbamqp.KeyMessage: wire.EncodeMessage(nil, m, wire.EncodeOptions{DeliveryCount: true})}
	}
	return okResponse(map[string]any{sbamqp.KeyMessages: list}), nil
}

// peek merges browse windows of every category of an entity's main queue
// in sequence order (or browses one of its sub-queues, by address); with
// sessionID not nil, only that session's messages.
func (c *conn) peek(ctx context.Context, entity string, from int64, count int, sessionID *string) ([]*broker.Message, error) {
	path, sub := broker.SplitAddress(entity)
	cats := []broker.Category{broker.CategoryActive, broker.CategoryLocked, broker.CategoryDeferred, broker.CategoryScheduled}
	if sub != broker.SubQueueMain {
		// The sub-queue's address browses it alone.
		path, cats = entity, []broker.Category{broker.CategoryDeadLettered}
	}
	var out []*broker.Message
	for round := 0; round < maxPeekRounds && len(out) < count; round++ {
		var window []*broker.Message
		for _, cat := range cats {
			ms, err := c.eng.Browse(ctx, broker.BrowseRequest{Entity: path, Category: cat, FromSequence: from, Max: count})
			if err != nil {
				return nil, err
			}
			window = append(window, ms...)
		}
		if len(window) == 0 {
			break
		}
		slices.SortFunc(window, func(a, b *broker.Message) int { return cmp.Compare(a.SequenceNumber, b.SequenceNumber) })
		window = slices.CompactFunc(window, func(a, b *broker.Message) bool { return a.SequenceNumber == b.SequenceNumber })
		window = window[:min(len(window), count)]
		for _, m := range window {
			if sessionID == nil || m.HasSessionID() && m.SessionID == *sessionID {
				out = append(out, m)
			}
		}
		if sessionID == nil {
			break
		}
		from = window[len(window)-1].SequenceNumber + 1
	}
	if len(out) > count {
		out = out[:count]
	}
	for i, m := range out {
		if m.Locked() {
			cp := *m
			cp.LockToken = broker.LockToken{}
			out[i] = &cp
		}
	}
	return out, nil
}

// receiveBySequence locks deferred messages by sequence number
// (receiver-settle-mode 1, peek-lock; 0 completes them at once) and
// returns them with their lock tokens, in the encoded messages too.
func receiveBySequence(r *mgmtRequest) (*response, error) {
	seqs, err := r.int64s(sbamqp.KeySequenceNumbers)
	if err != nil {
		return nil, err
	}
	mode, ok, err := r.integer(sbamqp.KeyReceiverSettleMode)
	if err != nil {
		return nil, err
	}
	peekLock := !ok || mode != 0
	c := r.c
	path, sub := broker.SplitAddress(r.entity)
	ent, err := c.eng.Entity(r.ctx, path)
	if err != nil {
		return nil, err
	}
	var msgs []*broker.Message
	if ent.Settings.RequiresSession && sub == broker.SubQueueMain {
		sid, ok, err := r.sessionID()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, broker.Errorf(broker.CodeSessionLockLost, "deferred messages of %q are received through an accepted session; this connection holds none", r.entity)
		}
		msgs, err = r.l.eng.ReceiveSessionDeferred(r.ctx, c.owner, r.entity, sid, seqs)
		if err != nil {
			return nil, err
		}
	} else if msgs, err = r.l.eng.ReceiveDeferredAs(r.ctx, c.owner, r.entity, seqs); err != nil {
		return nil, err
	}
	if !peekLock {
		ss := make([]broker.Settlement, len(msgs))
		for i, m := range msgs {
			ss[i] = broker.Settlement{Kind: broker.Complete, Entity: r.entity, Token: m.LockToken}
		}
		for _, err := range r.l.eng.SettleMany(context.WithoutCancel(r.ctx), ss) {
			if err != nil {
				return nil, err
			}
		}
	}
	list := make([]any, len(msgs))
	for i, m := range msgs {
		entry := map[string]any{}
		if peekLock {
			entry[sbamqp.KeyLockToken] = uuidOf(m.LockToken)
			entry[sbamqp.KeyMessage] = wire.EncodeMessage(nil, m, wire.EncodeOptions{LockToken: true, DeliveryCount: true})
		} else {
			cp := *m
			cp.LockToken, cp.LockedUntil = broker.LockToken{}, time.Time{}
			entry[sbamqp.KeyMessage] = wire.EncodeMessage(nil, &cp, wire.EncodeOptions{DeliveryCount: true})
		}
		list[i] = entry
	}
	return okResponse(map[string]any{sbamqp.KeyMessages: list}), nil
}

// dispositionKinds maps disposition-status values to settlements.
var dispositionKinds = map[string]broker.SettleKind{
	sbamqp.DispositionCompleted: broker.Complete,
	sbamqp.DispositionAbandoned: broker.Abandon,
	sbamqp.DispositionSuspended: broker.DeadLetter,
	sbamqp.DispositionDeferred:  broker.Defer,
	"deferred":                  broker.Defer,
}

// updateDisposition settles locked messages by lock token.
func updateDisposition(r *mgmtRequest) (*response, error) {
	status, _, err := r.str(sbamqp.KeyDispositionStatus)
	if err != nil {
		return nil, err
	}
	kind, known := dispositionKinds[status]
	if !known {
		return nil, broker.Errorf(broker.CodeInvalid, "disposition-status %q is not one of completed, abandoned, suspended, defered", status)
	}
	tokens, err := r.lockTokens()
	if err != nil {
		return nil, err
	}
	reason, _, err := r.str(sbamqp.KeyDeadLetterReason)
	if err != nil {
		return nil, err
	}
	desc, _, err := r.str(sbamqp.KeyDeadLetterDescription)
	if err != nil {
		return nil, err
	}
	var props map[string]any
	if v, ok := r.field(sbamqp.KeyPropertiesToModify); ok && v != nil {
		m, isMap := v.(wire.Map)
		if !isMap {
			return nil, missing(sbamqp.KeyPropertiesToModify, "a map", v, true)
		}
		if props, err = propertiesToModify(m); err != nil {
			return nil, err
		}
	}
	ss := make([]broker.Settlement, len(tokens))
	for i, t := range tokens {
		ss[i] = broker.Settlement{Kind: kind, Entity: r.entity, Token: t, Reason: reason, Description: desc, PropertiesToModify: props}
	}
	for _, err := range r.l.eng.SettleMany(r.ctx, ss) {
		if err != nil {
			return nil, err
		}
	}
	return okResponse(nil), nil
}

// scheduleMessage stores messages that become active at their
// x-opt-scheduled-enqueue-time and returns their sequence numbers.
func scheduleMessage(r *mgmtRequest) (*response, error) {
	v, present := r.field(sbamqp.KeyMessages)
	list, isList := v.([]any)
	if !isList || len(list) == 0 {
		return nil, missing(sbamqp.KeyMessages, "a non-empty list of maps", v, present)
	}
	if len(list) > maxMessagesPerResponse {
		return nil, broker.Errorf(broker.CodeInvalid, "%d messages to schedule; at most %d", len(list), maxMessagesPerResponse)
	}
	msgs := make([]*broker.Message, len(list))
	for i, e := range list {
		entry, isMap := e.(wire.Map)
		if !isMap {
			return nil, broker.Errorf(broker.CodeInvalid, "messages[%d] is a %T; want a map", i, e)
		}
		raw, _ := entry.Get(sbamqp.KeyMessage)
		b, isBin := raw.([]byte)
		if !isBin {
			return nil, broker.Errorf(broker.CodeInvalid, "messages[%d] has no binary \"message\"", i)
		}
		m, err := wire.DecodeMessage(b)
		if err != nil {
			return nil, err
		}
		if sid, ok := entry.Get(sbamqp.KeySessionID); ok {
			if s, isStr := sid.(string); isStr {
				m.SessionID, m.SessionIDSet = s, true // "" is the empty session
			}
		}
		if pk, ok := entry.Get(sbamqp.KeyPartitionKey); ok {
			if s, isStr := pk.(string); isStr && s != "" {
				m.PartitionKey = s
			}
		}
		msgs[i] = m
	}
	now := r.c.clock.Now()
	var seqs []int64
	for i := 0; i < len(msgs); {
		at := msgs[i].ScheduledEnqueueTime
		j := i + 1
		for j < len(msgs) && msgs[j].ScheduledEnqueueTime.Equal(at) {
			j++
		}
		if at.IsZero() {
			at = now
		}
		got, err := r.l.eng.Schedule(r.ctx, r.entity, at, msgs[i:j])
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, got...)
		i = j
	}
	return okResponse(map[string]any{sbamqp.KeySequenceNumbers: seqs}), nil
}

// cancelScheduled removes scheduled messages by sequence number.
func cancelScheduled(r *mgmtRequest) (*response, error) {
	seqs, err := r.int64s(sbamqp.KeySequenceNumbers)
	if err != nil {
		return nil, err
	}
	if err := r.l.eng.CancelScheduled(r.ctx, r.entity, seqs); err != nil {
		return nil, err
	}
	return okResponse(nil), nil
}
