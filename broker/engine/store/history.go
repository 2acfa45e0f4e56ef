package store

import "github.com/peeklock/peeklock/broker"

// A message's history is stored beside it, keyed by its entity and sequence
// number (not its sub-queue: a dead-lettered message keeps its number and
// its history), one record per event under a 16-bit index that counts the
// events recorded for it. The engine bounds it: with the event at index i it
// deletes the one at i-limit, so the lowest index stored is the number of
// events folded away. It deletes every record when the message goes for
// good, and DeleteEntity deletes those of the entity. Histories are
// written in the batch of the change they describe.

// HistoryEvent is one stored event of a message's history. The memory store
// keeps the value it is given (its strings shared with the engine's).
type HistoryEvent struct {
	Kind          broker.EventKind
	Sub           broker.SubQueue
	DeliveryCount uint32
	Time          int64 // unix nanoseconds
	Until         int64 // lock expiry, unix nanoseconds; 0: none
	Token         broker.LockToken
	Actor         string
	Reason        string
	Detail        string
}

// HistoryKey names the history of a message: its entity and sequence
// number.
type HistoryKey struct {
	Entity uint32
	Seq    int64
}

// HistoryOp is a change of a message's history: Event put as event Index
// (Event not nil), or Count events deleted from Index on (a zero Count
// does nothing).
type HistoryOp struct {
	Key   HistoryKey
	Index uint16
	Count uint16
	Event *HistoryEvent
}

// PutHistory stores event index of a message's history. The store copies
// *ev when the batch is applied; until then the caller must not change it.
func (b *Batch) PutHistory(k HistoryKey, index uint16, ev *HistoryEvent) {
	b.Hist = append(b.Hist, HistoryOp{Key: k, Index: index, Event: ev})
}

// DeleteHistory deletes n events of a message's history from index on
// (those not stored are skipped).
func (b *Batch) DeleteHistory(k HistoryKey, index, n uint16) {
	if n > 0 {
		b.Hist = append(b.Hist, HistoryOp{Key: k, Index: index, Count: n})
	}
}

// memoryHistory is the memory store's history of one message, kept in its
// map by value: the events from index first on, the oldest in one (no
// allocation for a message with a single event, as most have once their
// hand-outs are settled) and the others in more.
type memoryHistory struct {
	first uint16
	n     uint16
	one   HistoryEvent
	more  []HistoryEvent
}

// events returns the events, oldest first (a new slice).
func (h *memoryHistory) events() []HistoryEvent {
	if h.n == 0 {
		return nil
	}
	return append([]HistoryEvent{h.one}, h.more...)
}

// set replaces the events with evs from index first on.
func (h *memoryHistory) set(first uint16, evs []HistoryEvent) {
	*h = memoryHistory{first: first, n: uint16(len(evs))}
	if len(evs) > 0 {
		h.one = evs[0]
		if len(evs) > 1 {
			h.more = evs[1:]
		}
	}
}

// put stores ev at index i: appended after the last, or replacing one.
func (h *memoryHistory) put(i uint16, ev HistoryEvent) {
	n := int(i) - int(h.first)
	switch {
	case h.n == 0:
		h.first, h.n, h.one = i, 1, ev
	case n == 0:
		h.one = ev
	case n > 0 && n < int(h.n):
		h.more[n-1] = ev
	case n == int(h.n):
		h.more = append(h.more, ev)
		h.n++
	default: // out of order: the engine never writes so; keep the newest
		h.set(i, []HistoryEvent{ev})
	}
}

// drop deletes count events from index i. The engine deletes the oldest
// (or all): a deletion in the middle drops the newer ones too, so that the
// events left have no gap.
func (h *memoryHistory) drop(i, count uint16) {
	lo := max(int(i)-int(h.first), 0)
	hi := min(int(i)+int(count)-int(h.first), int(h.n))
	switch {
	case hi <= lo:
	case lo == 0:
		evs := h.events()
		h.set(h.first+uint16(hi), evs[hi:])
	default:
		h.set(h.first, h.events()[:lo])
	}
}
