package engine

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// loader rebuilds the engine's state from the store at start.
type loader struct {
	e      *Engine
	byID   map[uint32]*entity
	seqs   map[uint32]int64
	now    int64
	maxID  uint32
	orphan int         // messages of unknown entities
	stray  int         // session states and duplicate-detection records of unknown entities
	late   []lateEntry // main-queue messages that reached MaxDeliveryCount
}

type lateEntry struct {
	en *entity
	x  *entry
}

func (l *loader) Entity(rec store.EntityRecord) error {
	if rec.ID == idCounterEntity {
		return fmt.Errorf("stored entity %q has the reserved id 0", rec.Entity.Path)
	}
	en := newEntity(l.e, rec.ID, rec.Entity)
	l.byID[rec.ID] = en
	l.maxID = max(l.maxID, rec.ID)
	return nil
}

func (l *loader) Sequence(id uint32, last int64) error {
	l.seqs[id] = last
	return nil
}

// SessionState gives a session its stored state; the session exists from
// then on, with or without messages, as in Service Bus.
func (l *loader) SessionState(id uint32, sessionID string, state []byte, updated int64) error {
	en := l.byID[id]
	if en == nil {
		l.stray++
		return nil
	}
	s := en.session(sessionID)
	s.state, s.stateAt = state, updated
	return nil
}

// Duplicate adds a stored duplicate-detection record to the entity's
// history. An expired one is queued all the same (not remembered), so that
// the first prune deletes it from the store.
func (l *loader) Duplicate(r store.DuplicateRecord) error {
	en := l.byID[r.Entity]
	if en == nil {
		l.stray++
		return nil
	}
	if r.End > l.now {
		if old, ok := en.dup[r.ID]; !ok || old < r.End {
			en.dup[r.ID] = r.End
		}
	}
	en.dupq = append(en.dupq, dupRecord{id: r.ID, end: r.End})
	return nil
}

func (l *loader) Message(loc store.Loc, meta store.Meta) error {
	en := l.byID[loc.Entity]
	if en == nil || loc.Sub > broker.SubQueueTransferDeadLetter {
		l.orphan++
		return nil
	}
	x := entryFromMeta(loc, meta)
	en.size += int64(x.size)
	en.lastSeq = max(en.lastSeq, x.seq)
	en.add(x)
	if x.sub == broker.SubQueueMain && x.state != broker.StateDeferred && int64(x.failed) >= int64(en.settings.MaxDeliveryCount) {
		l.late = append(l.late, lateEntry{en, x})
	}
	if en.settings.RequiresDuplicateDetection && x.msgID != "" && x.sub == broker.SubQueueMain {
		if end := expiry(x.enqueued, en.settings.DuplicateDetectionHistoryTimeWindow); end > l.now {
			if old, ok := en.dup[x.msgID]; !ok || old < end {
				en.dup[x.msgID] = end
				en.dupq = append(en.dupq, dupRecord{id: x.msgID, end: end})
			}
		}
	}
	return nil
}

// load reads the store: entities, sequence numbers (never reused), session
// states, duplicate-detection history and messages. Locks are not stored,
// so every formerly locked message is simply available again, and a restart
// does not count as a failed delivery: the broker lost the lock, not the
// receiver (and a hand-out costs no store write).
//
// The history is the stored records (one per accepted message id, see
// isDuplicate) plus the ids of the stored messages still within their
// window, which is all a store written before the records existed has.
func (e *Engine) load() error {
	l := &loader{e: e, byID: make(map[uint32]*entity), seqs: make(map[uint32]int64), now: e.now()}
	if err := e.store.Load(l); err != nil {
		return storeErr("load the store", "", err)
	}
	if l.orphan > 0 {
		e.log.Warn("stored messages of unknown entities ignored", "count", l.orphan)
	}
	if l.stray > 0 {
		e.log.Warn("stored session states and duplicate-detection records of unknown entities ignored", "count", l.stray)
	}
	e.nextID = max(l.maxID, uint32(l.seqs[idCounterEntity])) + 1
	// Topics first, so subscriptions find them.
	for _, en := range l.byID {
		en.lastSeq = max(en.lastSeq, l.seqs[en.id])
		if en.kind != broker.KindSubscription {
			e.entities[en.key] = en
		}
	}
	for _, en := range l.byID {
		if en.kind != broker.KindSubscription {
			continue
		}
		topicPath, _, _ := broker.SplitSubscriptionPath(en.path)
		t := e.entities[pathKey(topicPath)]
		if t == nil || t.kind != broker.KindTopic {
			e.log.Warn("stored subscription without its topic ignored", "entity", en.path)
			continue
		}
		en.topic = t
		t.subs = append(t.subs, en)
		e.entities[en.key] = en
	}
	for _, le := range l.late {
		// Its failed deliveries reached the maximum in a store written
		// before they were counted on failure (or MaxDeliveryCount was
		// lowered): dead-letter it now, as the failure would have.
		le.en.unindex(le.x)
		le.en.deadLetter(le.x, broker.ReasonMaxDeliveryCountExceeded,
			fmt.Sprintf("Message could not be consumed after %d delivery attempts.", le.en.settings.MaxDeliveryCount), nil, broker.ActorBroker)
	}
	for _, en := range e.entities {
		if en.kind == broker.KindTopic {
			// A subscription's stored messages carry its topic's numbers.
			for _, s := range en.subs {
				en.lastSeq = max(en.lastSeq, s.lastSeq)
			}
		}
	}
	for _, en := range e.entities {
		// Order the history by window end for pruneDup (records come in
		// that order, the ids of stored messages in sequence order), and
		// delete the expired records. Then apply the dead-letter moves,
		// register the deadlines, and forward dead-lettered messages where
		// ForwardDeadLetteredMessagesTo says.
		_ = e.withLocked(en, func() error { // not deleted: the engine is opening
			if !slices.IsSortedFunc(en.dupq, compareDupEnd) {
				slices.SortStableFunc(en.dupq, compareDupEnd)
			}
			en.pruneDup(l.now)
			en.commitQuiet()
			return nil
		})
	}
	return nil
}

func compareDupEnd(a, b dupRecord) int { return cmp.Compare(a.end, b.end) }
