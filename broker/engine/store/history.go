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
//
// The first event (index 0: the send) may instead be kept inside the
// message's own record (PutMessageWithHistory), so that a send writes no
// history record of its own and a message whose history is only that event
// has none to delete. History reads it from there when no record of index 0
// exists. When the engine folds it away while the message stays,
// HideFirstHistory writes a record of index 0 that hides it (deleting index
// 0 deletes that record too).

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
// (Event not nil), event 0 kept in the message's record hidden (Hide), or
// Count events deleted from Index on (a zero Count does nothing).
type HistoryOp struct {
	Key   HistoryKey
	Index uint16
	Count uint16
	Event *HistoryEvent
	Hide  bool
}

// noop reports whether op changes nothing (a cancelled put).
func (op *HistoryOp) noop() bool { return op.Event == nil && op.Count == 0 && !op.Hide }

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

// HideFirstHistory folds away event 0 of a message's history while the
// message stays: the event kept in the message's record (see
// PutMessageWithHistory) is hidden, and a record of index 0 deleted.
func (b *Batch) HideFirstHistory(k HistoryKey) {
	b.Hist = append(b.Hist, HistoryOp{Key: k, Hide: true})
}

// memoryHistory is the memory store's history of one message, kept in its
// map by value: the events from index first on, the oldest in one (no
// allocation for a message with a single event, as most have once their
// hand-outs are settled) and the others in more. hidden says that event 0
// kept in the message's record was folded away (see HideFirstHistory).
type memoryHistory struct {
	first  uint16
	n      uint16
	hidden bool
	one    HistoryEvent
	more   []HistoryEvent
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
	*h = memoryHistory{first: first, n: uint16(len(evs)), hidden: h.hidden}
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
	if i == 0 && count > 0 {
		h.hidden = false
	}
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

// hide folds away event 0: hidden where the message's record keeps it,
// dropped here.
func (h *memoryHistory) hide() {
	h.drop(0, 1)
	h.hidden = true
}

// empty reports whether h keeps nothing, so that its map entry can go.
func (h *memoryHistory) empty() bool { return h.n == 0 && !h.hidden }
