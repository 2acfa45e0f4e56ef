package engine

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// Send sends messages to a queue, a topic (fanned out to the subscriptions
// whose rules match) or a subscription (delivered there only, as a resubmit
// from its dead-letter sub-queue does), and returns when all are stored; with
// a durable store, when they are on disk. A message whose MessageId was seen
// within the duplicate-detection window of an entity that requires it is
// accepted and dropped.
//
// The engine keeps each message's Body and ApplicationProperties without
// copying them: the caller must not change them after Send.
func (e *Engine) Send(ctx context.Context, entity string, msgs []*broker.Message) error {
	if err := e.enter(); err != nil {
		return err
	}
	defer e.leave()
	_, err := e.send(ctx, entity, msgs, time.Time{}, false, e.by(""))
	return err
}

// SendOwned is Send for messages the caller hands over: the engine keeps
// and changes the messages themselves instead of copies, so the caller must
// not use them after the call, whatever it returns. The listener sends each
// message it decodes this way, a copy less per message.
func (e *Engine) SendOwned(ctx context.Context, entity string, msgs []*broker.Message) error {
	if err := e.enter(); err != nil {
		return err
	}
	defer e.leave()
	_, err := e.send(ctx, entity, msgs, time.Time{}, true, e.by(""))
	return err
}

// Schedule sends messages that become active at `at` and returns their
// sequence numbers, in order (0 for a message dropped as a duplicate). For a
// topic these are the topic's numbers, which its subscriptions share; for an
// entity that auto-forwards, its own numbers.
func (e *Engine) Schedule(ctx context.Context, entity string, at time.Time, msgs []*broker.Message) ([]int64, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer e.leave()
	if at.IsZero() {
		return nil, newErr(broker.CodeInvalid, entity, "a scheduled send needs a ScheduledEnqueueTime")
	}
	return e.send(ctx, entity, msgs, at, false, e.by(""))
}

// send is Send and Schedule (at not zero), the messages' histories saying
// they come as o says; owned says that msgs are the engine's to keep (see
// SendOwned).
func (e *Engine) send(ctx context.Context, addr string, msgs []*broker.Message, at time.Time, owned bool, o origin) ([]int64, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	en, sub, err := e.lookup(addr)
	if err != nil {
		return nil, err
	}
	if sub != broker.SubQueueMain {
		return nil, newErr(broker.CodeInvalid, en.path, "messages cannot be sent to a %s", sub)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	en.touch(e.now())
	copies := msgs // owned messages are accepted in place, and the slice is not written
	if !owned {
		copies = make([]*broker.Message, len(msgs))
	}
	for i, m := range msgs {
		if m == nil {
			return nil, newErr(broker.CodeInvalid, en.path, "message %d of the batch is nil", i)
		}
		if m.TimeToLive < 0 {
			return nil, newErr(broker.CodeInvalid, en.path, "message %d has a negative TimeToLive (%v)", i, m.TimeToLive)
		}
		if err := m.CheckDataSections(); err != nil {
			msg := err.Error()
			var be *broker.Error
			if errors.As(err, &be) {
				msg = be.Message
			}
			return nil, newErr(broker.CodeInvalid, en.path, "message %d: %s", i, msg)
		}
		if err := checkIDLengths(en.path, i, m); err != nil {
			return nil, err
		}
		if m.SessionID != "" && m.PartitionKey != "" && m.PartitionKey != m.SessionID {
			return nil, newErr(broker.CodeInvalid, en.path, "message %d has PartitionKey %q and SessionId %q: a message that has both must have the same value in each", i, m.PartitionKey, m.SessionID)
		}
		c := m
		if owned {
			e.accept(c)
		} else {
			c = e.acceptCopy(m)
			copies[i] = c
		}
		if !at.IsZero() {
			c.ScheduledEnqueueTime = at
		}
	}
	return e.deliver(en, copies, 0, false, o)
}

// checkIDLengths refuses message i of a send when its MessageId, SessionId
// or PartitionKey is longer than broker.MaxIDLength.
func checkIDLengths(path string, i int, m *broker.Message) error {
	for _, f := range [...]struct{ name, v string }{
		{"MessageId", m.MessageID}, {"SessionId", m.SessionID}, {"PartitionKey", m.PartitionKey},
	} {
		if len(f.v) <= broker.MaxIDLength {
			continue // no more UTF-16 code units than bytes
		}
		if n := utf16Len(f.v); n > broker.MaxIDLength {
			return newErr(broker.CodeInvalid, path, "message %d has a %s of %d characters; Service Bus allows at most %d", i, f.name, n, broker.MaxIDLength)
		}
	}
	return nil
}

// acceptCopy returns a shallow copy of m, accepted (see accept).
func (e *core) acceptCopy(m *broker.Message) *broker.Message {
	c := *m
	e.accept(&c)
	return &c
}

// accept makes c a message as the engine takes it in: the broker-set
// properties cleared, a MessageId where the sender gave none, and the size
// computed.
func (e *core) accept(c *broker.Message) {
	if c.MessageID == "" {
		c.MessageID = e.msgIDs.new()
	}
	c.SequenceNumber = 0
	c.EnqueuedSequenceNumber = 0
	c.EnqueuedTime = time.Time{}
	c.ExpiresAt = time.Time{}
	c.LockedUntil = time.Time{}
	c.LockToken = broker.LockToken{}
	c.DeliveryCount = 0
	c.DeadLetterSource = ""
	c.State = broker.StateActive
	c.Size = broker.MessageSize(c)
}

// deliver stores msgs (private copies) in en, or passes them on: a topic fans
// out, an entity with ForwardTo forwards. hop counts auto-forwarding hops.
// An entity whose status takes no sends refuses them (CodeEntityDisabled),
// also when they are forwarded to it; a topic's fan-out copies reach its
// subscriptions whatever their status, as in Service Bus.
//
// accepted says whether the messages have been accepted already, so that a
// failure to forward them must not reach the sender: then an entity whose
// forward fails (see transferFailure) keeps them in its transfer dead-letter
// sub-queue instead. A send straight to an entity is not accepted yet, and a
// failing forward fails the send (nothing stored, nothing lost); a topic's
// fan-out and the forwarding of dead-lettered messages are.
//
// o says who sent the messages, for their histories.
func (e *Engine) deliver(en *entity, msgs []*broker.Message, hop int, accepted bool, o origin) ([]int64, error) {
	if err := en.sendRefused(); err != nil {
		return nil, err
	}
	if hop > maxForwardHops {
		err := newErr(broker.CodeInvalid, en.path, "auto-forwarding stops after %d hops; check the ForwardTo chain that leads here", maxForwardHops)
		err.Err = errHopLimit
		return nil, err
	}
	switch en.kind {
	case broker.KindTopic:
		return e.sendTopic(en, msgs, hop, o)
	case broker.KindSubscription:
		// A subscription's sequence numbers come from its topic, so that they
		// stay unique when messages arrive both by fan-out and directly.
		seqs, p, err := e.topicAccept(en.topic, msgs, false, nil)
		if err != nil {
			return nil, err
		}
		if _, err := e.storeOrForward(en, msgs, seqs, hop, accepted, o); err != nil {
			return nil, err
		}
		if err := p.Wait(); err != nil {
			return nil, storeErr("store the sequence number", en.topic.path, err)
		}
		return seqs, nil
	}
	return e.storeOrForward(en, msgs, nil, hop, accepted, o)
}

// topicAccept checks sizes against the topic's limit, drops duplicates (when
// dedupe and the topic requires it: seq 0) and assigns the topic's sequence
// numbers. The time-to-live cap of the topic is applied to the copies.
// span, when not nil, asks for span[i] consecutive numbers for message i
// (at least one); seqs[i] is the first.
func (e *Engine) topicAccept(t *entity, msgs []*broker.Message, dedupe bool, span []int) ([]int64, store.Pending, error) {
	var seqs []int64
	var p store.Pending
	err := e.withLocked(t, func() (err error) {
		now := e.now()
		t.pruneDup(now)
		if err := t.checkSizes(msgs); err != nil {
			return err
		}
		seqs, _ = t.number(msgs, dedupe, span, now)
		p, err = t.commit()
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return seqs, p, nil
}

// checkSizes refuses msgs when one is larger than the topic takes. Called
// with t locked.
func (t *entity) checkSizes(msgs []*broker.Message) error {
	for i, m := range msgs {
		if m.Size > t.maxMessageSize() {
			return errTooLarge(t, i, m)
		}
	}
	return nil
}

// number is topicAccept's work under the topic mutex, the duplicates window
// already pruned: it drops duplicates, assigns the numbers, caps the
// time-to-live and adds the topic's sequence to its batch. It also returns
// the message ids it recorded in the duplicate-detection window, so that a
// caller whose store batch fails can forget them again.
func (t *entity) number(msgs []*broker.Message, dedupe bool, span []int, now int64) (seqs []int64, recorded []string) {
	seqs = make([]int64, len(msgs))
	for i, m := range msgs {
		if dedupe && t.settings.RequiresDuplicateDetection && t.isDuplicate(m.MessageID, now) {
			continue
		}
		if dedupe && t.settings.RequiresDuplicateDetection && m.MessageID != "" {
			recorded = append(recorded, m.MessageID)
		}
		t.lastSeq++
		seqs[i] = t.lastSeq
		if span != nil && span[i] > 1 {
			t.lastSeq += int64(span[i] - 1)
		}
		m.TimeToLive = effectiveTTL(m.TimeToLive, t.settings.DefaultMessageTimeToLive)
	}
	t.batch.SetSequence(t.id, t.lastSeq)
	return seqs, recorded
}

func errTooLarge(en *entity, i int, m *broker.Message) error {
	return newErr(broker.CodeMessageTooLarge, en.path, "message %d is %d bytes; the limit is %d KB (%d bytes)",
		i, m.Size, en.settings.MaxMessageSizeInKilobytes, en.maxMessageSize())
}

// storeOrForward stores msgs in a queue or subscription, or forwards them
// when it has ForwardTo (accepted as for deliver). pre holds sequence numbers
// assigned by a topic (0: dropped), or is nil to assign the entity's own. The
// sequence numbers are assigned and the batch applied under the entity mutex;
// a durable store is waited on outside it, and only then do the messages
// become visible.
func (e *Engine) storeOrForward(en *entity, msgs []*broker.Message, pre []int64, hop int, accepted bool, o origin) ([]int64, error) {
	var st storeResult
	if err := e.withDue(en, func(now int64) (err error) {
		st, err = en.store(msgs, pre, now, o)
		return err
	}); err != nil {
		return nil, err
	}
	if st.forwardTo != "" {
		return e.forward(en, st, msgs, hop, accepted, o)
	}
	if st.shown {
		return st.seqs, nil
	}
	if err := e.showWhenStored(en, st.p, st.total, st.entries, broker.EventSent, "", "store the messages"); err != nil {
		return nil, err
	}
	return st.seqs, nil
}

// storeResult is what entity.store did under the entity mutex.
type storeResult struct {
	seqs      []int64
	p         store.Pending
	forwardTo string   // not "": the messages are to be forwarded there
	entries   []*entry // stored, shown once p is durable
	total     int64    // their bytes, counted in the entity's size
	shown     bool     // entries are visible already (p was Done)
}

// store is storeOrForward's work under en's mutex: the checks, the
// numbers, and the messages added to the batch and committed (or, for an
// entity with ForwardTo, its sequence number committed). On an error
// nothing is numbered, counted or written.
func (en *entity) store(msgs []*broker.Message, pre []int64, now int64, o origin) (storeResult, error) {
	st := en.settings
	forward := st.ForwardTo != ""
	var total int64
	for i, m := range msgs {
		if pre != nil && pre[i] == 0 {
			continue
		}
		if pre == nil && m.Size > en.maxMessageSize() {
			return storeResult{}, errTooLarge(en, i, m)
		}
		if st.RequiresSession && !m.HasSessionID() && !forward {
			err := newErr(broker.CodeInvalid, en.path, "message %d has no SessionId but the entity requires sessions", i)
			err.Err = errNoSessionID
			return storeResult{}, err
		}
		total += m.Size
	}
	if !forward && en.size+total > en.maxTotalSize() {
		return storeResult{}, newErr(broker.CodeQuotaExceeded, en.path, "the entity is full: %d bytes stored, %d more do not fit in %d MB",
			en.size, total, st.MaxSizeInMegabytes)
	}
	seqs := pre
	lastSeq := en.lastSeq
	var dups []string
	if seqs == nil {
		seqs = make([]int64, len(msgs))
		for i, m := range msgs {
			if st.RequiresDuplicateDetection && en.isDuplicate(m.MessageID, now) {
				total -= m.Size
				continue
			}
			if st.RequiresDuplicateDetection && m.MessageID != "" {
				dups = append(dups, m.MessageID)
			}
			en.lastSeq++
			seqs[i] = en.lastSeq
		}
		en.batch.SetSequence(en.id, en.lastSeq)
	}
	if forward {
		p, err := en.commit()
		return storeResult{seqs: seqs, p: p, forwardTo: st.ForwardTo}, err
	}
	entries := make([]*entry, 0, len(msgs))
	for i, m := range msgs {
		if seqs[i] == 0 {
			continue
		}
		entries = append(entries, en.accept(m, seqs[i], now, broker.SubQueueMain, o))
	}
	en.size += total
	p, err := en.commit()
	if err != nil {
		en.size -= total
		en.lastSeq = lastSeq
		for _, id := range dups {
			delete(en.dup, id)
		}
		return storeResult{}, err
	}
	out := storeResult{seqs: seqs, p: p, entries: entries, total: total}
	if _, ok := p.(store.Done); ok {
		en.show(entries, broker.EventSent, "")
		out.shown = true
	}
	return out, nil
}

// showWhenStored waits, with no mutex held, until p is durable and then
// shows entries, the messages it stores, with the event kind (and reason)
// of show. When the wait fails it gives their total bytes back to en's
// quota and returns the store's error, saying it failed to do what.
func (e *Engine) showWhenStored(en *entity, p store.Pending, total int64, entries []*entry, kind broker.EventKind, reason, what string) error {
	if err := p.Wait(); err != nil {
		_ = e.withLocked(en, func() error { // a deleted entity counts nothing
			en.size -= total
			return nil
		})
		return storeErr(what, en.path, err)
	}
	return e.withLocked(en, func() error {
		en.show(entries, kind, reason)
		return nil
	})
}

// accept fills in the broker properties of m as stored in en's sub-queue sub
// under seq, adds the store write to the batch, and returns its (not yet
// indexed) entry, its history's first event saying it comes as o says. A
// message enters a dead-letter sub-queue active, even when it was
// scheduled.
func (en *entity) accept(m *broker.Message, seq, now int64, sub broker.SubQueue, o origin) *entry {
	start := now
	state := broker.StateActive
	if !m.ScheduledEnqueueTime.IsZero() && sub == broker.SubQueueMain {
		if at := m.ScheduledEnqueueTime.UnixNano(); at > now {
			start, state = at, broker.StateScheduled
		}
	}
	ttl := effectiveTTL(m.TimeToLive, en.settings.DefaultMessageTimeToLive)
	exp := expiry(start, ttl)
	m.SequenceNumber = seq
	m.EnqueuedTime = time.Unix(0, start).UTC()
	m.TimeToLive = ttl
	m.ExpiresAt = time.Time{}
	if exp != 0 {
		m.ExpiresAt = time.Unix(0, exp).UTC()
	}
	m.State = state
	x := &entry{
		seq:      seq,
		enqueued: start,
		expires:  exp,
		size:     clampSize(m.Size),
		state:    state,
		sub:      sub,
		session:  m.SessionID,
		msgID:    m.MessageID,
	}
	if state == broker.StateScheduled {
		x.at = start
	}
	var first *store.HistoryEvent
	if en.eng.histLimit > 0 {
		kind, reason := broker.EventSent, ""
		switch {
		case sub != broker.SubQueueMain:
			kind = broker.EventDeadLettered
			reason, _ = m.ApplicationProperties[broker.PropDeadLetterReason].(string)
		case state == broker.StateScheduled:
			kind = broker.EventScheduled
		}
		first = en.hist.firstEvent(x, kind, now, reason, o) // kept in the message's record
	}
	en.batch.PutMessageWithHistory(x.loc(en.id), x.meta(), m, first)
	return x
}

// show makes accepted entries visible, with the event kind and reason
// given (a scheduled message's event is EventScheduled).
func (en *entity) show(entries []*entry, kind broker.EventKind, reason string) {
	for _, x := range entries {
		en.add(x)
		if x.state == broker.StateScheduled {
			en.emit(broker.EventScheduled, x, "")
		} else {
			en.emit(kind, x, reason)
		}
		en.notify(x)
	}
}

// forward passes msgs on to st.forwardTo, en's ForwardTo target (see
// passOn), with no mutex held, and returns once en's own store change (its
// sequence number) is stored.
func (e *Engine) forward(en *entity, st storeResult, msgs []*broker.Message, hop int, accepted bool, o origin) ([]int64, error) {
	if err := e.passOn(en, st.forwardTo, msgs, st.seqs, hop, accepted, o); err != nil {
		return nil, err
	}
	if err := st.p.Wait(); err != nil {
		return nil, storeErr("store the sequence number", en.path, err)
	}
	return st.seqs, nil
}

// passOn delivers msgs, which en numbered seqs (0: dropped), to to, en's
// ForwardTo target, each with EnqueuedSequenceNumber set to the number it
// got in en. Called with no mutex held. When the forward fails for a reason
// transferFailure knows and the messages are accepted already, they go to
// en's transfer dead-letter sub-queue and passOn succeeds.
func (e *Engine) passOn(en *entity, to string, msgs []*broker.Message, seqs []int64, hop int, accepted bool, o origin) error {
	fw := make([]*broker.Message, 0, len(msgs))
	for i, m := range msgs {
		if seqs[i] == 0 {
			continue
		}
		c := *m
		if c.EnqueuedSequenceNumber == 0 {
			c.EnqueuedSequenceNumber = seqs[i]
		}
		fw = append(fw, &c)
	}
	target, _, ferr := e.lookup(to)
	if ferr != nil {
		ferr = newErr(broker.CodeNotFound, en.path, "the auto-forwarding target %q does not exist", to)
	} else if len(fw) > 0 {
		_, ferr = e.deliver(target, fw, hop+1, accepted, origin{actor: o.actor, via: "forwarded from " + en.path})
	}
	if ferr != nil {
		reason, description, ok := transferFailure(ferr)
		if !accepted || !ok {
			return ferr
		}
		e.log.Warn("auto-forwarding failed; the messages go to the transfer dead-letter sub-queue",
			"entity", en.path, "to", to, "reason", reason, "err", ferr)
		return e.transferDeadLetter(en, msgs, seqs, reason, description, o)
	}
	if e.events.active() {
		for i, m := range msgs {
			if seqs[i] != 0 {
				en.emit(broker.EventForwarded, &entry{seq: seqs[i], msgID: m.MessageID}, target.path)
			}
		}
	}
	return nil
}

// effectiveTTL applies the entity default: zero means the default, and a
// longer value is cut down to it.
func effectiveTTL(ttl, def time.Duration) time.Duration {
	if ttl <= 0 || ttl > def {
		return def
	}
	return ttl
}

// expiry returns start+ttl in unix ns, or 0 (never) for MaxTimeToLive or
// when the sum does not fit.
func expiry(start int64, ttl time.Duration) int64 {
	if ttl >= broker.MaxTimeToLive || int64(ttl) > math.MaxInt64-start {
		return 0
	}
	return start + int64(ttl)
}

// isDuplicate reports whether id was seen within the window, and records it
// when not, in memory and in en's batch (so that the record is stored with
// the send that accepts the message).
func (en *entity) isDuplicate(id string, now int64) bool {
	if id == "" {
		return false
	}
	if end, ok := en.dup[id]; ok && end > now {
		return true
	}
	end := expiry(now, en.settings.DuplicateDetectionHistoryTimeWindow)
	if end == 0 {
		end = math.MaxInt64
	}
	en.dup[id] = end
	en.dupq = append(en.dupq, dupRecord{id: id, end: end})
	en.batch.PutDuplicate(store.DuplicateRecord{Entity: en.id, ID: id, End: end})
	return false
}

// pruneDup forgets message ids whose window has passed, and deletes their
// stored records in en's batch (a record that was never stored, as that of a
// send that failed, costs a needless delete).
func (en *entity) pruneDup(now int64) {
	for en.dupHead < len(en.dupq) && en.dupq[en.dupHead].end <= now {
		r := en.dupq[en.dupHead]
		if en.dup[r.id] == r.end {
			delete(en.dup, r.id)
		}
		en.batch.DeleteDuplicate(store.DuplicateRecord{Entity: en.id, ID: r.id, End: r.end})
		en.dupq[en.dupHead] = dupRecord{}
		en.dupHead++
	}
	if en.dupHead == len(en.dupq) {
		en.dupq, en.dupHead = en.dupq[:0], 0
	} else if en.dupHead > 1024 && en.dupHead*2 > len(en.dupq) {
		n := copy(en.dupq, en.dupq[en.dupHead:])
		clear(en.dupq[n:])
		en.dupq, en.dupHead = en.dupq[:n], 0
	}
}

// CancelScheduled removes scheduled messages by sequence number. On a queue
// or subscription every number must be a scheduled message
// (ErrMessageNotFound otherwise, and nothing is cancelled). On a topic each
// number is cancelled in every subscription that has it; numbers found in
// none are reported with ErrMessageNotFound after the others are cancelled.
func (e *Engine) CancelScheduled(ctx context.Context, entity string, seqs []int64) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.leave()
	en, sub, err := e.lookup(entity)
	if err != nil {
		return err
	}
	if sub != broker.SubQueueMain {
		return newErr(broker.CodeInvalid, en.path, "a %s has no scheduled messages", sub)
	}
	if en.kind != broker.KindTopic {
		_, err := e.cancelIn(en, seqs, true)
		return err
	}
	subs := e.subscriptions(en)
	found := make(map[int64]bool, len(seqs))
	for _, s := range subs {
		got, err := e.cancelIn(s, seqs, false)
		if err != nil && broker.CodeOf(err) != broker.CodeNotFound {
			return err
		}
		for _, q := range got {
			found[q] = true
		}
	}
	for _, q := range seqs {
		if !found[q] {
			return newErr(broker.CodeMessageNotFound, en.path, "no subscription has a scheduled message with sequence number %d", q)
		}
	}
	return nil
}

// cancelIn cancels the scheduled messages of en among seqs and returns the
// numbers it found; with all, a missing number cancels nothing.
func (e *Engine) cancelIn(en *entity, seqs []int64, all bool) ([]int64, error) {
	var found []int64
	var p store.Pending
	if err := e.withDue(en, func(now int64) (err error) {
		found, p, err = en.cancel(seqs, all, now)
		return err
	}); err != nil {
		return nil, err
	}
	if err := p.Wait(); err != nil {
		return nil, storeErr("cancel scheduled messages", en.path, err)
	}
	return found, nil
}

// cancel is cancelIn's work under en's mutex.
func (en *entity) cancel(seqs []int64, all bool, now int64) ([]int64, store.Pending, error) {
	en.use(now)
	var xs []*entry
	for _, q := range seqs {
		x, ok := en.scheduled.Get(q)
		if !ok {
			if all {
				return nil, nil, newErr(broker.CodeMessageNotFound, en.path, "no scheduled message with sequence number %d", q)
			}
			continue
		}
		xs = append(xs, x)
	}
	found := make([]int64, 0, len(xs))
	for _, x := range xs {
		if x.gone {
			continue // listed twice
		}
		en.remove(x)
		en.emit(broker.EventCancelled, x, "")
		found = append(found, x.seq)
	}
	p, err := en.commit()
	if err != nil {
		return nil, nil, err
	}
	return found, p, nil
}
