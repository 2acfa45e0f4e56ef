package engine

import (
	"slices"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// historyLog records the message histories of one entity, under its
// mutex: it numbers each message's events (entry.hist), adds them to the
// entity's batch within the engine's bound, holds back those of hand-outs
// and renewals (held), and keeps the events the batch points at until it
// is applied (buf). The entity applies the batch; the log only fills it.
type historyLog struct {
	eng   *Engine
	id    uint32       // the entity's, which the history keys name
	path  string       // the entity's, for the log
	batch *store.Batch // the entity's
	// buf holds the history events of batch's ops (PutHistory keeps a
	// pointer until the batch is applied), so that an event costs no
	// allocation; emptied with the batch (reset).
	buf []store.HistoryEvent
	// held keeps back the history events of hand-outs and renewals, which
	// change nothing else in the store (see rider).
	held heldEvents
}

// note adds an event of x's history to the batch, with x's sub-queue and
// delivery count, the time now (unless ev has one) and the broker as its
// actor (unless ev names one), and deletes the event that falls out of the
// bound. Nothing when history is off.
func (h *historyLog) note(x *entry, ev store.HistoryEvent) {
	h.noteOps(x, &ev)
}

// rider notes an event of x's lock that changes nothing else in the
// store (a hand-out, a renewal: kind, at now, the lock until until): it is
// held back (held) until the message's own next change,
// which writes it first, or its completion, which cancels it, so that it
// costs no write of its own; a history read, the engine's close and too
// many held write the held events. A crash of a durable store loses those
// still held: history only, as locks are not stored and a restart is no
// failed delivery. Writing them with the entity's next change instead cost
// the listener's durable receive 14% more CPU with history on than off
// (BENCHMARKS.md), for a record written and deleted again per message.
// The event's actor and detail are o's. flush says that too many events
// wait in the batch: the caller writes them now (entity.flushRiders).
func (h *historyLog) rider(x *entry, kind broker.EventKind, now, until int64, o origin) (flush bool) {
	if h.eng.histLimit == 0 {
		return false
	}
	if x.hist == histUnknown {
		h.resolve(x)
	}
	if len(h.held.list) >= maxRiders {
		flush = h.compact()
	}
	// Field by field: the slot is reused, and a copy of a whole event
	// costs more.
	ev := &h.held.add(x, h.nextIndex(x)).ev
	ev.Kind, ev.Sub, ev.DeliveryCount = kind, x.sub, x.deliveryCount()
	ev.Time, ev.Until, ev.Token = now, until, x.token
	ev.Actor, ev.Reason, ev.Detail = o.actor, "", o.via
	return flush
}

// maxRiders bounds the history events held back (see rider), and
// maxBatchedRiders those that wait in the batch (see compact).
const (
	maxRiders        = 1024
	maxBatchedRiders = 4 * maxRiders
)

// compact makes room among the held events: it drops those written or
// cancelled, or, when more than half are still held (many messages locked
// at once), puts them all in the batch, to go to the store with the
// entity's next change (see heldEvents.riders) rather than in a write of
// their own; past maxBatchedRiders of those, flush says to write them at
// once.
func (h *historyLog) compact() (flush bool) {
	if h.held.live > maxRiders/2 {
		n := h.batch.Len()
		h.boardAll()
		h.held.riders += h.batch.Len() - n
		return h.held.riders >= maxBatchedRiders
	}
	h.held.compact()
	return false
}

// boardHeld puts x's held events into the batch, before a change of x.
func (h *historyLog) boardHeld(x *entry) {
	var buf [4]int
	for _, i := range h.held.of(x, buf[:]) {
		h.board(&h.held.list[i])
	}
	x.rider = 0
}

// boardAll puts every held event into the batch.
func (h *historyLog) boardAll() {
	if h.held.live > 0 {
		for i := range h.held.list {
			if ev := &h.held.list[i]; ev.x != nil {
				ev.x.rider = 0
				h.board(ev)
			}
		}
	}
	h.held.clearList()
}

// board puts the held event ev into the batch.
func (h *historyLog) board(ev *heldEvent) {
	p := h.slot()
	*p = ev.ev
	h.putEvent(store.HistoryKey{Entity: h.id, Seq: ev.x.seq}, ev.index, p)
	ev.x = nil
	h.held.live--
}

// cancelHeld cancels x's held events, as x leaves for good, so that they
// are neither written nor deleted, and returns the index of the oldest
// (ok false: none was held).
func (h *historyLog) cancelHeld(x *entry) (oldest uint16, ok bool) {
	return h.held.cancel(x)
}

// noteOps adds the ops of note to the batch, after those of x's held
// events.
func (h *historyLog) noteOps(x *entry, ev *store.HistoryEvent) {
	if h.eng.histLimit == 0 {
		return
	}
	if x.hist == histUnknown {
		h.resolve(x)
	}
	if x.rider != 0 {
		h.boardHeld(x)
	}
	i := h.nextIndex(x)
	h.putEvent(store.HistoryKey{Entity: h.id, Seq: x.seq}, i, h.fill(x, ev))
}

// nextIndex returns the index of x's next event and counts it.
func (h *historyLog) nextIndex(x *entry) uint16 {
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
func (h *historyLog) putEvent(k store.HistoryKey, i uint16, ev *store.HistoryEvent) {
	limit := h.eng.histLimit
	h.batch.PutHistory(k, i, ev)
	switch {
	case int(i) < limit:
	case int(i) == limit:
		h.batch.HideFirstHistory(k) // event 0 may be kept in the message's record
	default:
		h.batch.DeleteHistory(k, i-uint16(limit), 1)
	}
}

// fill completes ev as an event of x's history (see complete) and returns
// where it is kept until the batch is applied.
func (h *historyLog) fill(x *entry, ev *store.HistoryEvent) *store.HistoryEvent {
	p := h.slot()
	*p = *ev
	h.complete(x, p)
	return p
}

// slot returns a new event in buf, kept until the batch is applied;
// it may hold what an earlier use left: the caller sets every field.
func (h *historyLog) slot() *store.HistoryEvent {
	n := len(h.buf)
	if n == cap(h.buf) {
		h.buf = slices.Grow(h.buf, 1)
	}
	h.buf = h.buf[:n+1]
	return &h.buf[n]
}

// complete gives ev x's sub-queue and delivery count, the time now (unless
// ev has one) and the broker as its actor (unless ev names one).
func (h *historyLog) complete(x *entry, ev *store.HistoryEvent) {
	ev.Sub = x.sub
	if ev.DeliveryCount == 0 {
		ev.DeliveryCount = x.deliveryCount()
	}
	if ev.Time == 0 {
		ev.Time = h.eng.now()
	}
	if ev.Actor == "" {
		ev.Actor = broker.ActorBroker
	}
}

// firstEvent returns the first event of the history of x, a new message
// (kind, at now, for reason, sent as o says), to be kept in its record (see
// store.Batch.PutMessageWithHistory), and counts it: the send writes no
// history record of its own. Called with history on.
func (h *historyLog) firstEvent(x *entry, kind broker.EventKind, now int64, reason string, o origin) *store.HistoryEvent {
	x.hist, x.histInline = 1, true
	ev := h.slot() // field by field, as in rider
	ev.Kind, ev.Sub, ev.DeliveryCount = kind, x.sub, x.deliveryCount()
	ev.Time, ev.Until, ev.Token = now, 0, broker.LockToken{}
	ev.Actor, ev.Reason, ev.Detail = o.actor, reason, o.via
	return ev
}

// storedFirstEvent returns, for a store put of x's message again, its
// stored first event, read back, so that the record keeps it; nil when
// history is off or the event was folded away.
func (h *historyLog) storedFirstEvent(x *entry) *store.HistoryEvent {
	if h.eng.histLimit == 0 {
		return nil
	}
	first, evs, err := h.eng.store.History(store.HistoryKey{Entity: h.id, Seq: x.seq})
	if err != nil {
		h.eng.log.Error("reading a message history failed", "entity", h.path, "seq", x.seq, "err", err)
	}
	if err != nil || first != 0 || len(evs) == 0 {
		return nil
	}
	p := h.slot()
	*p = evs[0]
	return p
}

// resolve reads how many events the stored history of a loaded entry
// has. When the last is a hand-out or renewal, that lock was lost when the
// broker restarted (locks are not stored), and an event says so.
func (h *historyLog) resolve(x *entry) {
	first, evs, err := h.eng.store.History(store.HistoryKey{Entity: h.id, Seq: x.seq})
	if err != nil {
		h.eng.log.Error("reading a message history failed", "entity", h.path, "seq", x.seq, "err", err)
	}
	x.hist = first + uint16(len(evs))
	if len(evs) == 0 || x.hist > histMax {
		x.hist = min(x.hist, histMax)
		return
	}
	last := evs[len(evs)-1]
	if last.Kind == broker.EventLocked || last.Kind == broker.EventRenewed {
		h.note(x, store.HistoryEvent{Kind: broker.EventLockLost, Time: h.eng.started, Token: last.Token,
			Actor: broker.ActorBroker, Reason: "the broker restarted (locks are not stored)"})
	}
}

// drop deletes x's stored history, as x leaves for good; its held
// events are cancelled.
func (h *historyLog) drop(x *entry) {
	if h.eng.histLimit == 0 {
		return // none recorded; a loaded one is left for the entity's deletion: reading it costs more
	}
	if x.hist == histUnknown {
		h.resolve(x)
	}
	k := store.HistoryKey{Entity: h.id, Seq: x.seq}
	hi := int(x.hist) // the events stored or in the batch: [lo, hi)
	if oldest, ok := h.cancelHeld(x); ok {
		hi = int(oldest)
	}
	lo := 0
	if limit := h.eng.histLimit; limit > 0 && hi > limit {
		lo = hi - limit
		h.batch.DeleteHistory(k, 0, 1) // what hides event 0 (see putEvent)
	} else if x.histInline {
		lo = 1 // event 0 goes with the message's record
	}
	if hi > lo {
		h.batch.DeleteHistory(k, uint16(lo), uint16(hi-lo))
	}
	x.hist, x.rider, x.histInline = 0, 0, false
}

// ended records the end of a lock (abandon, release, expiry, loss,
// deferral) by actor (the broker's for an expiry or a loss), with the
// properties an abandon or deferral changed and the delivery count it
// leaves (0: x's).
func (h *historyLog) ended(x *entry, kind broker.EventKind, token broker.LockToken, why string, props map[string]any, count uint32, actor string) {
	if h.eng.histLimit == 0 {
		return
	}
	h.note(x, store.HistoryEvent{Kind: kind, Token: token, Reason: why, Detail: describeProps(props), DeliveryCount: count, Actor: actor})
}

// ridersOnly says whether the batch holds nothing but boarded held events
// (see heldEvents.riders), which wait for the entity's next change.
func (h *historyLog) ridersOnly() bool { return h.batch.Len() == h.held.riders }

// batchMoved forgets the riders of a batch whose ops went into another
// entity's batch (a topic's fan-out); buf stays until that one is applied.
func (h *historyLog) batchMoved() { h.held.riders = 0 }

// reset empties buf and forgets the riders, once the batch is applied or
// dropped and nothing points into buf.
func (h *historyLog) reset() {
	h.held.riders = 0
	clear(h.buf)
	h.buf = h.buf[:0]
	if cap(h.buf) > maxKeptOps {
		h.buf = nil
	}
}
