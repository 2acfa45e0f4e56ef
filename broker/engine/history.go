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
	// (historyLog.resolve), so that a restart reads no history.
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
			en.hist.resolve(x)
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
	if x, ok := en.scheduled.Get(seq); ok {
		return x
	}
	for i := range en.q {
		q := &en.q[i]
		for _, t := range [...]*seqSet{q.active, q.locked, q.deferred} {
			if x, ok := t.Get(seq); ok {
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
			en.hist.note(x, store.HistoryEvent{Kind: broker.EventResubmitted, Actor: e.actor,
				Detail: fmt.Sprintf("resubmitted as sequence number %d in %s", copySeq, target)})
			en.commitQuiet()
		}
		return nil
	})
}
