package engine

import (
	"slices"

	"github.com/peeklock/peeklock/broker/engine/store"
)

// heldEvents are the history events of hand-outs and renewals that an
// entity holds back until their message's next change (see
// historyLog.rider), in the order they happened.
type heldEvents struct {
	list []heldEvent
	// live counts the events of list not yet boarded (put in the batch)
	// or cancelled.
	live int
	// riders counts the ops in the entity's batch that are held events
	// boarded when too many were held (see historyLog.compact): commit
	// leaves a batch of riders alone, for the entity's next change to take
	// to the store.
	riders int
}

// heldEvent is a history event held back: the event, its index, and its
// message, nil once the event is boarded or cancelled. more says that an
// older event of the same message is held too.
type heldEvent struct {
	x     *entry
	index uint16
	more  bool
	ev    store.HistoryEvent
}

// add holds a new event of x, the index-th of its history, and returns its
// slot for the caller to fill in (ev): a reused slot may hold what an
// earlier event left.
func (h *heldEvents) add(x *entry, index uint16) *heldEvent {
	n := len(h.list)
	if n == cap(h.list) {
		h.list = slices.Grow(h.list, 1)
	}
	h.list = h.list[:n+1]
	e := &h.list[n]
	e.x, e.index, e.more = x, index, x.rider != 0
	x.rider = uint16(n + 1)
	h.live++
	return e
}

// of returns where x's held events are in list, oldest first, in buf when
// they fit.
func (h *heldEvents) of(x *entry, buf []int) []int {
	i := int(x.rider) - 1
	if i < 0 || i >= len(h.list) || h.list[i].x != x {
		return buf[:0]
	}
	out := append(buf[:0], i)
	for h.list[i].more {
		for i--; i >= 0 && h.list[i].x != x; i-- {
		}
		if i < 0 {
			break
		}
		out = append(out, i)
	}
	slices.Reverse(out)
	return out
}

// cancel drops x's held events, as x leaves for good, so that they are
// neither written nor deleted, and returns the index of the oldest (ok
// false: none was held).
func (h *heldEvents) cancel(x *entry) (oldest uint16, ok bool) {
	var buf [4]int
	list := h.of(x, buf[:])
	x.rider = 0
	if len(list) == 0 {
		return 0, false
	}
	oldest = h.list[list[0]].index
	for _, i := range list {
		h.list[i].x = nil
		h.live--
	}
	if h.live == 0 {
		h.list = h.list[:0] // none left: start over
	}
	return oldest, true
}

// compact drops the events boarded or cancelled, keeping the others in
// order (and their messages' pointers to their newest).
func (h *heldEvents) compact() {
	j := 0
	for i := range h.list {
		e := h.list[i]
		if e.x == nil {
			continue
		}
		if e.x.rider == uint16(i+1) {
			e.x.rider = uint16(j + 1)
		}
		h.list[j] = e
		j++
	}
	clear(h.list[j:])
	h.list = h.list[:j]
}

// clearList empties list once every event of it is boarded.
func (h *heldEvents) clearList() {
	clear(h.list)
	h.list = h.list[:0]
}
