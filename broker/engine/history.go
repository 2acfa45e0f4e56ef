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

// origin says who a send comes from, for the histories of the messages it
// stores: the caller's actor, and where the messages were passed on from
// (a topic's fan-out, a forward, a resubmit), or "".
type origin struct {
	actor string
	via   string
}

// originOf returns the origin of a call with ctx.
func originOf(ctx context.Context) origin {
	o := origin{actor: broker.ActorOf(ctx)}
	if entity, seq, ok := broker.ResubmitOf(ctx); ok {
		o.via = fmt.Sprintf("resubmitted from %s (sequence number %d)", entity, seq)
	}
	return o
}

// by records, when history is kept, that what en does until its mutex is
// released is done by the actor of ctx (see entity.actor), and the reason
// for it, via. Called with en locked.
func (en *entity) by(ctx context.Context, via string) {
	if en.eng.histLimit > 0 {
		en.actor, en.via = broker.ActorOf(ctx), via
	}
}

// from is by with an origin.
func (en *entity) from(o origin) {
	if en.eng.histLimit > 0 {
		en.actor, en.via = o.actor, o.via
	}
}

// note adds an event of x's history to en's batch, with x's sub-queue and
// delivery count, the time now (unless ev has one) and en's actor (unless ev
// names one), and deletes the event that falls out of the bound. Called with
// en locked; nothing when history is off.
func (en *entity) note(x *entry, ev store.HistoryEvent) {
	en.noteOps(x, &ev)
}

// noteRider is note for an event that changes nothing else in the store (a
// hand-out, a renewal): it waits in the batch for the entity's next change
// (see entity.riders), so that it costs no write of its own.
func (en *entity) noteRider(x *entry, ev store.HistoryEvent) {
	n := en.batch.Len()
	en.noteOps(x, &ev)
	x.rider = 0
	if i := len(en.batch.Hist); i > 0 && i < 0xffff && en.batch.Hist[i-1].Event != nil {
		x.rider = uint16(i)
	}
	if en.riders += en.batch.Len() - n; en.riders >= maxRiders {
		en.flushRiders() // hand-outs with no change in between: bound the batch
	}
}

// maxRiders bounds the history events that wait for a change of their
// entity (see noteRider).
const maxRiders = 1024

// noteOps adds the ops of note to the batch.
func (en *entity) noteOps(x *entry, ev *store.HistoryEvent) {
	limit := en.eng.histLimit
	if limit == 0 {
		return
	}
	if x.hist == histUnknown {
		en.resolveHistory(x)
	}
	k := store.HistoryKey{Entity: en.id, Seq: x.seq}
	i := x.hist
	if i >= histMax {
		i = histMax - 1
	} else {
		x.hist++
	}
	en.batch.PutHistory(k, i, en.fill(x, ev))
	switch {
	case int(i) < limit:
	case int(i) == limit:
		en.batch.HideFirstHistory(k) // event 0 may be kept in the message's record
	default:
		en.batch.DeleteHistory(k, i-uint16(limit), 1)
	}
}

// fill completes ev as an event of x's history (see note) and returns where
// it is kept until the batch is applied.
func (en *entity) fill(x *entry, ev *store.HistoryEvent) *store.HistoryEvent {
	ev.Sub = x.sub
	if ev.DeliveryCount == 0 {
		ev.DeliveryCount = x.deliveryCount()
	}
	if ev.Time == 0 {
		ev.Time = en.eng.now()
	}
	if ev.Actor == "" {
		ev.Actor = en.actor
		if ev.Actor == "" {
			ev.Actor = broker.ActorBroker
		}
	}
	en.histBuf = append(en.histBuf, *ev)
	return &en.histBuf[len(en.histBuf)-1]
}

// firstEvent returns, for a store put of x's message, the first event of
// its history when ev is that event (x has none yet) or x's message is
// stored again with it (its stored first event, read back), so that it is
// kept in the message's record (see store.Batch.PutMessageWithHistory);
// nil when history is off or the event was folded away. For a new message
// it counts the event: the send writes no history record of its own.
func (en *entity) firstEvent(x *entry, ev *store.HistoryEvent) *store.HistoryEvent {
	if en.eng.histLimit == 0 {
		return nil
	}
	if ev != nil {
		x.hist, x.histInline = 1, true
		return en.fill(x, ev)
	}
	first, evs, err := en.eng.store.History(store.HistoryKey{Entity: en.id, Seq: x.seq})
	if err != nil {
		en.eng.log.Error("reading a message history failed", "entity", en.path, "seq", x.seq, "err", err)
	}
	if err != nil || first != 0 || len(evs) == 0 {
		return nil
	}
	en.histBuf = append(en.histBuf, evs[0])
	return &en.histBuf[len(en.histBuf)-1]
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

// dropHistory deletes x's stored history, as x leaves for good. Called with
// en locked.
func (en *entity) dropHistory(x *entry) {
	if x.hist == histUnknown {
		if en.eng.histLimit == 0 {
			return // left for the entity's deletion: reading it costs more
		}
		en.resolveHistory(x)
	}
	k := store.HistoryKey{Entity: en.id, Seq: x.seq}
	lo := 0
	if limit := en.eng.histLimit; limit > 0 && int(x.hist) > limit {
		lo = int(x.hist) - limit
		en.batch.DeleteHistory(k, 0, 1) // what hides event 0 (see noteOps)
	} else if x.histInline {
		lo = 1 // event 0 goes with the message's record
	}
	hi := int(x.hist)
	if en.cancelRider(x, k) {
		hi--
	}
	if hi > lo {
		en.batch.DeleteHistory(k, uint16(lo), uint16(hi-lo))
	}
	x.hist, x.rider, x.histInline = 0, 0, false
}

// cancelRider cancels the put of x's newest event when it still waits in
// the batch (a hand-out's event riding with the completion that deletes the
// message), so that it is neither written nor deleted, and reports whether
// it did. Older events that wait too stay; the deletion, which comes after
// them, covers them.
func (en *entity) cancelRider(x *entry, k store.HistoryKey) bool {
	i := int(x.rider) - 1
	if i < 0 || i >= len(en.batch.Hist) {
		return false
	}
	op := &en.batch.Hist[i]
	if op.Key != k || op.Event == nil || op.Index != x.hist-1 {
		return false // applied since, and the slot reused
	}
	*op = store.HistoryOp{} // a no-op
	return true
}

// noteEnded records the end of a lock (abandon, release, expiry, loss,
// deferral), with the properties an abandon or deferral changed and the
// delivery count it leaves (0: x's).
func (en *entity) noteEnded(x *entry, kind broker.EventKind, token broker.LockToken, why string, props map[string]any, count uint32) {
	if en.eng.histLimit == 0 {
		return
	}
	ev := store.HistoryEvent{Kind: kind, Token: token, Reason: why, Detail: describeProps(props), DeliveryCount: count}
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
	if err := e.enter(); err != nil {
		return broker.History{}, err
	}
	defer e.leave()
	if err := checkCtx(ctx); err != nil {
		return broker.History{}, err
	}
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

// noteResubmitted records in the history of the original of a resubmit
// (ctx says which) the sequence number its copy got in target.
func (e *Engine) noteResubmitted(ctx context.Context, target string, seqs []int64) {
	entity, seq, ok := broker.ResubmitOf(ctx)
	if !ok || e.histLimit == 0 || len(seqs) == 0 || seqs[0] == 0 {
		return
	}
	en, _, err := e.lookup(entity)
	if err != nil {
		return
	}
	_ = e.withLocked(en, func() error { // a deleted original has no history
		if x := en.find(seq); x != nil {
			en.note(x, store.HistoryEvent{Kind: broker.EventResubmitted, Actor: broker.ActorOf(ctx),
				Detail: fmt.Sprintf("resubmitted as sequence number %d in %s", seqs[0], target)})
			en.commitQuiet()
		}
		return nil
	})
}
