package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// DefaultHistoryLimit is how many events of one message's history the
// engine keeps when Options.HistoryLimit is zero; older ones are folded
// into a count.
const DefaultHistoryLimit = 32

const (
	// histUnknown marks an entry loaded from the store: how many events its
	// history has is read from the store when it is first needed
	// (resolveHistory), so that a restart reads no history.
	histUnknown = 0xffff
	// histMax is where event indexes stop: a message with that many events
	// has each later one replace its newest.
	histMax = 0xfffe
)

// origin says who does what an engine call does, for the histories of the
// messages it touches: the actor of the handle called (Engine.As), and,
// for the messages a send stores, where they were passed on from (a
// topic's fan-out, a forward, a resubmit), or "". Every locked step that
// notes an event is handed the origin it records.
type origin struct {
	actor string
	via   string
}

// by returns the origin of a call through e, with via.
func (e *Engine) by(via string) origin {
	return origin{actor: e.actor, via: via}
}

// note adds an event of x's history to en's batch, with x's sub-queue and
// delivery count, the time now (unless ev has one) and the broker as its
// actor (unless ev names one), and deletes the event that falls out of the
// bound. Called with en locked; nothing when history is off.
func (en *entity) note(x *entry, ev store.HistoryEvent) {
	en.noteOps(x, &ev)
}

// noteRider notes an event of x's lock that changes nothing else in the
// store (a hand-out, a renewal: kind, at now, the lock until until): it is
// held back in en (see entity.held) until the message's own next change,
// which writes it first, or its completion, which cancels it, so that it
// costs no write of its own; a history read, the engine's close and too
// many held write the held events. A crash of a durable store loses those
// still held: history only, as locks are not stored and a restart is no
// failed delivery. Writing them with the entity's next change instead cost
// the listener's durable receive 14% more CPU with history on than off
// (BENCHMARKS.md), for a record written and deleted again per message.
// The event's actor and detail are o's.
func (en *entity) noteRider(x *entry, kind broker.EventKind, now, until int64, o origin) {
	if en.eng.histLimit == 0 {
		return
	}
	if x.hist == histUnknown {
		en.resolveHistory(x)
	}
	if len(en.held.list) >= maxRiders {
		en.compactHeld()
	}
	// Field by field: the slot is reused, and a copy of a whole event
	// costs more.
	ev := &en.held.add(x, en.nextIndex(x)).ev
	ev.Kind, ev.Sub, ev.DeliveryCount = kind, x.sub, x.deliveryCount()
	ev.Time, ev.Until, ev.Token = now, until, x.token
	ev.Actor, ev.Reason, ev.Detail = o.actor, "", o.via
}

// maxRiders bounds the history events held back (see noteRider), and
// maxBatchedRiders those that wait in the batch (see compactHeld).
const (
	maxRiders        = 1024
	maxBatchedRiders = 4 * maxRiders
)

// compactHeld makes room among the held events: it drops those written or
// cancelled, or, when more than half are still held (many messages locked
// at once), puts them all in the batch, to go to the store with the
// entity's next change (see heldEvents.riders) rather than in a write of
// their own; past maxBatchedRiders of those, they are written at once.
func (en *entity) compactHeld() {
	if en.held.live > maxRiders/2 {
		n := en.batch.Len()
		en.boardAll()
		if en.held.riders += en.batch.Len() - n; en.held.riders >= maxBatchedRiders {
			en.flushRiders()
		}
		return
	}
	en.held.compact()
}

// boardHeld puts x's held events into the batch, before a change of x.
func (en *entity) boardHeld(x *entry) {
	var buf [4]int
	for _, i := range en.held.of(x, buf[:]) {
		en.board(&en.held.list[i])
	}
	x.rider = 0
}

// boardAll puts every held event into the batch.
func (en *entity) boardAll() {
	if en.held.live > 0 {
		for i := range en.held.list {
			if h := &en.held.list[i]; h.x != nil {
				h.x.rider = 0
				en.board(h)
			}
		}
	}
	en.held.clearList()
}

// board puts the held event h into the batch.
func (en *entity) board(h *heldEvent) {
	p := en.histSlot()
	*p = h.ev
	en.putEvent(store.HistoryKey{Entity: en.id, Seq: h.x.seq}, h.index, p)
	h.x = nil
	en.held.live--
}

// cancelHeld cancels x's held events, as x leaves for good, so that they
// are neither written nor deleted, and returns the index of the oldest
// (ok false: none was held).
func (en *entity) cancelHeld(x *entry) (oldest uint16, ok bool) {
	return en.held.cancel(x)
}

// noteOps adds the ops of note to the batch, after those of x's held
// events.
func (en *entity) noteOps(x *entry, ev *store.HistoryEvent) {
	if en.eng.histLimit == 0 {
		return
	}
	if x.hist == histUnknown {
		en.resolveHistory(x)
	}
	if x.rider != 0 {
		en.boardHeld(x)
	}
	i := en.nextIndex(x)
	en.putEvent(store.HistoryKey{Entity: en.id, Seq: x.seq}, i, en.fill(x, ev))
}

// nextIndex returns the index of x's next event and counts it.
func (en *entity) nextIndex(x *entry) uint16 {
	i := x.hist
	if i >= histMax {
		i = histMax - 1
	} else {
		x.hist++
	}
	return i
}

// putEvent adds to the batch the put of event i of the history k, and
// deletes the event that falls out of the bound.
func (en *entity) putEvent(k store.HistoryKey, i uint16, ev *store.HistoryEvent) {
	limit := en.eng.histLimit
	en.batch.PutHistory(k, i, ev)
	switch {
	case int(i) < limit:
	case int(i) == limit:
		en.batch.HideFirstHistory(k) // event 0 may be kept in the message's record
	default:
		en.batch.DeleteHistory(k, i-uint16(limit), 1)
	}
}

// fill completes ev as an event of x's history (see complete) and returns
// where it is kept until the batch is applied.
func (en *entity) fill(x *entry, ev *store.HistoryEvent) *store.HistoryEvent {
	p := en.histSlot()
	*p = *ev
	en.complete(x, p)
	return p
}

// histSlot returns a new event in histBuf, kept until the batch is applied;
// it may hold what an earlier use left: the caller sets every field.
func (en *entity) histSlot() *store.HistoryEvent {
	n := len(en.histBuf)
	if n == cap(en.histBuf) {
		en.histBuf = slices.Grow(en.histBuf, 1)
	}
	en.histBuf = en.histBuf[:n+1]
	return &en.histBuf[n]
}

// complete gives ev x's sub-queue and delivery count, the time now (unless
// ev has one) and the broker as its actor (unless ev names one).
func (en *entity) complete(x *entry, ev *store.HistoryEvent) {
	ev.Sub = x.sub
	if ev.DeliveryCount == 0 {
		ev.DeliveryCount = x.deliveryCount()
	}
	if ev.Time == 0 {
		ev.Time = en.eng.now()
	}
	if ev.Actor == "" {
		ev.Actor = broker.ActorBroker
	}
}

// firstEvent returns the first event of the history of x, a new message
// (kind, at now, for reason, sent as o says), to be kept in its record (see
// store.Batch.PutMessageWithHistory), and counts it: the send writes no
// history record of its own. Called with history on.
func (en *entity) firstEvent(x *entry, kind broker.EventKind, now int64, reason string, o origin) *store.HistoryEvent {
	x.hist, x.histInline = 1, true
	ev := en.histSlot() // field by field, as in noteRider
	ev.Kind, ev.Sub, ev.DeliveryCount = kind, x.sub, x.deliveryCount()
	ev.Time, ev.Until, ev.Token = now, 0, broker.LockToken{}
	ev.Actor, ev.Reason, ev.Detail = o.actor, reason, o.via
	return ev
}

// storedFirstEvent returns, for a store put of x's message again, its
// stored first event, read back, so that the record keeps it; nil when
// history is off or the event was folded away.
func (en *entity) storedFirstEvent(x *entry) *store.HistoryEvent {
	if en.eng.histLimit == 0 {
		return nil
	}
	first, evs, err := en.eng.store.History(store.HistoryKey{Entity: en.id, Seq: x.seq})
	if err != nil {
		en.eng.log.Error("reading a message history failed", "entity", en.path, "seq", x.seq, "err", err)
	}
	if err != nil || first != 0 || len(evs) == 0 {
		return nil
	}
	p := en.histSlot()
	*p = evs[0]
	return p
}

// resolveHistory reads how many events the stored history of a loaded entry
// has. When the last is a hand-out or renewal, that lock was lost when the
// broker restarted (locks are not stored), and an event says so.
func (en *entity) resolveHistory(x *entry) {
	first, evs, err := en.eng.store.History(store.HistoryKey{Entity: en.id, Seq: x.seq})
	if err != nil {
		en.eng.log.Error("reading a message history failed", "entity", en.path, "seq", x.seq, "err", err)
	}
	x.hist = first + uint16(len(evs))
	if len(evs) == 0 || x.hist > histMax {
		x.hist = min(x.hist, histMax)
		return
	}
	last := evs[len(evs)-1]
	if last.Kind == broker.EventLocked || last.Kind == broker.EventRenewed {
		en.note(x, store.HistoryEvent{Kind: broker.EventLockLost, Time: en.eng.started, Token: last.Token,
			Actor: broker.ActorBroker, Reason: "the broker restarted (locks are not stored)"})
	}
}

// dropHistory deletes x's stored history, as x leaves for good; its held
// events are cancelled. Called with en locked.
func (en *entity) dropHistory(x *entry) {
	if en.eng.histLimit == 0 {
		return // none recorded; a loaded one is left for the entity's deletion: reading it costs more
	}
	if x.hist == histUnknown {
		en.resolveHistory(x)
	}
	k := store.HistoryKey{Entity: en.id, Seq: x.seq}
	hi := int(x.hist) // the events stored or in the batch: [lo, hi)
	if oldest, ok := en.cancelHeld(x); ok {
		hi = int(oldest)
	}
	lo := 0
	if limit := en.eng.histLimit; limit > 0 && hi > limit {
		lo = hi - limit
		en.batch.DeleteHistory(k, 0, 1) // what hides event 0 (see putEvent)
	} else if x.histInline {
		lo = 1 // event 0 goes with the message's record
	}
	if hi > lo {
		en.batch.DeleteHistory(k, uint16(lo), uint16(hi-lo))
	}
	x.hist, x.rider, x.histInline = 0, 0, false
}

// noteEnded records the end of a lock (abandon, release, expiry, loss,
// deferral) by actor (the broker's for an expiry or a loss), with the
// properties an abandon or deferral changed and the delivery count it
// leaves (0: x's).
func (en *entity) noteEnded(x *entry, kind broker.EventKind, token broker.LockToken, why string, props map[string]any, count uint32, actor string) {
	if en.eng.histLimit == 0 {
		return
	}
	ev := store.HistoryEvent{Kind: kind, Token: token, Reason: why, Detail: describeProps(props), DeliveryCount: count, Actor: actor}
	if kind == broker.EventLockExpired || kind == broker.EventLockLost {
		ev.Actor = broker.ActorBroker
	}
	en.note(x, ev)
}

// describeProps lists changed properties for a history, sorted by name,
// each value cut short.
func describeProps(props map[string]any) string {
	if len(props) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("properties changed: ")
	for i, k := range slices.Sorted(maps.Keys(props)) {
		if i > 0 {
			b.WriteString(", ")
		}
		v := fmt.Sprint(props[k])
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		fmt.Fprintf(&b, "%s=%s", k, v)
	}
	return b.String()
}

// History returns the history of the message seq of entity (any of its
// sub-queues: a message keeps its history when it is dead-lettered). See
// broker.HistoryReader.
func (e *Engine) History(ctx context.Context, entity string, seq int64) (broker.History, error) {
	if err := e.begin(ctx); err != nil {
		return broker.History{}, err
	}
	defer e.leave()
	if e.histLimit == 0 {
		return broker.History{}, broker.Errorf(broker.CodeNotSupported, "message history is turned off (serve --history=false)")
	}
	en, _, err := e.lookup(entity)
	if err != nil {
		return broker.History{}, err
	}
	var k store.HistoryKey
	if err := e.withDue(en, func(int64) error {
		x := en.find(seq)
		if x == nil {
			return newErr(broker.CodeMessageNotFound, en.path, "no stored message with sequence number %d", seq)
		}
		if x.hist == histUnknown {
			en.resolveHistory(x)
		}
		en.flushRiders()
		k = store.HistoryKey{Entity: en.id, Seq: x.seq}
		return nil
	}); err != nil {
		return broker.History{}, err
	}
	first, evs, err := e.store.History(k)
	if err != nil {
		return broker.History{}, storeErr("read the history", en.path, err)
	}
	h := broker.History{Entity: en.path, Sequence: seq, Folded: int(first), Events: make([]broker.HistoryEvent, len(evs))}
	for i, ev := range evs {
		h.Events[i] = broker.HistoryEvent{
			Kind: ev.Kind, Time: time.Unix(0, ev.Time).UTC(), SubQueue: ev.Sub, Actor: ev.Actor,
			Token: ev.Token, DeliveryCount: ev.DeliveryCount, Reason: ev.Reason, Detail: ev.Detail,
		}
		if ev.Until != 0 {
			h.Events[i].LockedUntil = time.Unix(0, ev.Until).UTC()
		}
	}
	return h, nil
}

// find returns the stored entry with sequence number seq in any sub-queue,
// or nil. Called with en locked.
func (en *entity) find(seq int64) *entry {
	probe := &entry{seq: seq}
	if x, ok := en.scheduled.Get(probe); ok {
		return x
	}
	for i := range en.q {
		q := &en.q[i]
		for _, t := range [...]*tree{q.active, q.locked, q.deferred} {
			if x, ok := t.Get(probe); ok {
				return x
			}
		}
	}
	return nil
}

// SendResubmitted sends m, the copy of message seq of the sub-queue dlq, to
// target, its history saying where it came from, and returns the sequence
// number it got (0: dropped as a duplicate). See broker.ResubmitRecorder.
func (e *Engine) SendResubmitted(ctx context.Context, target string, m *broker.Message, dlq string, seq int64) (int64, error) {
	if err := e.enter(); err != nil {
		return 0, err
	}
	defer e.leave()
	seqs, err := e.send(ctx, target, []*broker.Message{m}, time.Time{}, false,
		e.by(fmt.Sprintf("resubmitted from %s (sequence number %d)", dlq, seq)))
	if err != nil || len(seqs) == 0 {
		return 0, err
	}
	return seqs[0], nil
}

// NoteResubmitted records in the history of message seq of dlq, the
// original of a resubmit, that its copy is message copySeq of target. A
// message no longer there has no history to note it in: that is no error.
func (e *Engine) NoteResubmitted(ctx context.Context, dlq string, seq int64, target string, copySeq int64) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.leave()
	if e.histLimit == 0 {
		return nil
	}
	en, _, err := e.lookup(dlq)
	if err != nil {
		return err
	}
	return e.withLocked(en, func() error {
		if x := en.find(seq); x != nil {
			en.note(x, store.HistoryEvent{Kind: broker.EventResubmitted, Actor: e.actor,
				Detail: fmt.Sprintf("resubmitted as sequence number %d in %s", copySeq, target)})
			en.commitQuiet()
		}
		return nil
	})
}
