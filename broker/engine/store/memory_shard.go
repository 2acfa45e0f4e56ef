package store

import (
	"sync"
	"sync/atomic"
)

// memoryShard is what the memory store keeps of one entity, under a mutex
// of its own, so that batches of different entities apply at once: with
// one mutex for the store, eight queues worked on by two cores went no
// faster than one (BENCHMARKS.md, session 32).
type memoryShard struct {
	id       uint32 // the entity's
	mu       sync.RWMutex
	dead     bool          // the entity was deleted and the shard left the store: look it up again
	entity   *EntityRecord // nil: none stored
	seq      int64         // the sequence stored, when hasSeq
	hasSeq   bool
	messages memoryMessages
	states   map[string]storedState // by session id; nil until the first
	dups     map[dupKey]struct{}    // nil until the first
	history  map[int64]memoryHistory
	histPeak int // most histories since the map was made (see shrinkHistory)

	// listed says that the shard is in its store's list of shards with
	// pages to shrink (Memory.thin); it changes with mu held.
	listed atomic.Bool
	// lastOps is the store's count of puts and deletes when a batch was
	// last applied to the shard, so that sweepThin passes over busy shards
	// without their mutex.
	lastOps atomic.Uint64
}

// dupKey is a duplicate-detection record of a shard's entity.
type dupKey struct {
	id  string
	end int64
}

func newMemoryShard(id uint32, spares *sparePages) *memoryShard {
	return &memoryShard{id: id, messages: newMemoryMessagesSharing(spares)}
}

// apply applies op, of the shard's entity; orphans counts a meta put for a
// message that is not stored. Called with mu held.
func (sh *memoryShard) apply(op *Op, orphans *atomic.Int64) {
	switch op.Kind {
	case OpPutEntity:
		rec := *op.Entity
		sh.entity = &rec
	case OpDeleteEntity:
		sh.clear()
	case OpSetSequence:
		sh.seq, sh.hasSeq = op.Loc.Seq, true
	case OpPutMessage:
		sh.messages.put(keyOf(op.Loc)).set(op)
	case OpPutMeta:
		if r := sh.messages.get(keyOf(op.Loc)); r != nil {
			r.meta = op.Meta
		} else {
			orphans.Add(1)
		}
	case OpDeleteMessage:
		sh.messages.delete(keyOf(op.Loc))
	case OpSetSessionState:
		if sh.states == nil {
			sh.states = make(map[string]storedState)
		}
		sh.states[op.ID] = storedState{op.State, op.Updated}
	case OpDeleteSessionState:
		delete(sh.states, op.ID)
	case OpPutDuplicate:
		if sh.dups == nil {
			sh.dups = make(map[dupKey]struct{})
		}
		sh.dups[dupKey{op.ID, op.End}] = struct{}{}
	case OpDeleteDuplicate:
		delete(sh.dups, dupKey{op.ID, op.End})
	}
}

// clear forgets everything of the entity: it was deleted.
func (sh *memoryShard) clear() {
	sh.entity, sh.seq, sh.hasSeq = nil, 0, false
	sh.messages.deleteEntity(sh.id)
	sh.states, sh.dups, sh.history, sh.histPeak = nil, nil, nil, 0
}

// empty reports whether the shard keeps nothing.
func (sh *memoryShard) empty() bool {
	return sh.entity == nil && !sh.hasSeq && len(sh.messages.pages) == 0 &&
		len(sh.states) == 0 && len(sh.dups) == 0 && len(sh.history) == 0
}

// applyHistory applies one history change. Called with mu held.
func (sh *memoryShard) applyHistory(op *HistoryOp) {
	if op.noop() {
		return // cancelled
	}
	seq := op.Key.Seq
	h, ok := sh.history[seq]
	if op.Hide || op.Event != nil {
		if op.Hide {
			h.hide()
		} else {
			h.put(op.Index, *op.Event)
		}
		if sh.history == nil {
			sh.history = make(map[int64]memoryHistory)
		}
		sh.history[seq] = h
		sh.histPeak = max(sh.histPeak, len(sh.history))
		return
	}
	if !ok {
		return
	}
	if h.drop(op.Index, op.Count); h.empty() {
		delete(sh.history, seq)
		sh.shrinkHistory()
	} else {
		sh.history[seq] = h
	}
}

// shrinkHistory makes the history map again when it holds far fewer
// histories than it once did: a Go map keeps its memory, and the values
// are kept in it.
func (sh *memoryShard) shrinkHistory() {
	if n := len(sh.history); sh.histPeak > 1024 && n < sh.histPeak/8 {
		m := make(map[int64]memoryHistory, n) // maps.Clone would keep the size
		for k, h := range sh.history {
			m[k] = h
		}
		sh.history, sh.histPeak = m, n
	}
}

// historyOf returns the stored history of message seq, as Store.History
// does. Called with mu held for reading.
func (sh *memoryShard) historyOf(seq int64) (uint16, []HistoryEvent) {
	h := sh.history[seq]
	if !h.hidden && (h.n == 0 || h.first == 1) {
		for _, sub := range subQueues {
			if r := sh.messages.get(keyOf(Loc{Entity: sh.id, Sub: sub, Seq: seq})); r != nil && r.first.ok {
				return 0, append([]HistoryEvent{r.first.event()}, h.events()...)
			}
		}
	}
	return h.first, h.events()
}
