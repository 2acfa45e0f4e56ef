package model

import (
	"slices"
	"sort"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// paneState is the state of one pane: its window of messages, the cursor
// and the selection.
type paneState struct {
	// top is the FromSequence of the window: rows[0] has the first sequence
	// number >= top in the category.
	top int64
	// rows is the window: the rows on screen plus one (to know whether
	// more follow).
	rows []*broker.Message
	// cursor is the index in rows of the row under the cursor.
	cursor int
	// pos is the 1-based position of rows[0] in the category, best effort
	// (0: unknown).
	pos int64
	// selected holds the sequence numbers selected with space or *;
	// allSelected is set when * made it (a second * clears it).
	selected    map[int64]bool
	allSelected bool
	// filterTops are earlier window starts while a filter is in force: a
	// filtered window cannot be found backwards by bisection.
	filterTops []int64
	// seeking is set while a scroll waits for the broker.
	seeking bool
	// pendingCursor places the cursor when the next window arrives.
	pendingCursor cursorPlace
	// wantSeq, when not 0, puts the cursor on that message when it arrives.
	wantSeq int64
	// movedAt is when the row under the cursor last changed by itself
	// (followCursor), movedWhy how; the user moving the cursor clears them.
	movedAt  time.Time
	movedWhy string
	scanned  int
	partial  bool
	err      error
	loaded   bool
}

// cursorPlace says where the cursor goes when a window arrives.
type cursorPlace uint8

const (
	cursorKeep  cursorPlace = iota // on the same message if it is still there
	cursorFirst                    // on the first row
	cursorLast                     // on the last row on screen
)

// current returns the message under the cursor, or nil.
func (p *paneState) current() *broker.Message {
	if p.cursor >= 0 && p.cursor < len(p.rows) {
		return p.rows[p.cursor]
	}
	return nil
}

// reset forgets the window (entity change, filter change).
func (p *paneState) reset() {
	p.top = 0
	p.rows = nil
	p.cursor = 0
	p.pos = 1
	p.filterTops = nil
	p.seeking = false
	p.pendingCursor = cursorKeep
	p.wantSeq = 0
	p.chose()
	p.scanned, p.partial = 0, false
	p.err = nil
	p.loaded = false
	p.clearSelection()
}

// clearSelection unselects every message of the pane.
func (p *paneState) clearSelection() {
	clear(p.selected)
	p.allSelected = false
}

// category returns the broker category of pane i.
func category(i int) broker.Category { return broker.Categories[i] }

// The panes by index: pane i shows category(i), in broker.Categories order.
const (
	activePane       = int(broker.CategoryActive)
	lockedPane       = int(broker.CategoryLocked)
	deferredPane     = int(broker.CategoryDeferred)
	scheduledPane    = int(broker.CategoryScheduled)
	deadLetteredPane = int(broker.CategoryDeadLettered)
)

// address returns the address the messages of pane i are received from:
// the entity, or its dead-letter sub-queue for the Dead-lettered pane (whose
// transfer-dead-lettered messages come from the transfer dead-letter
// sub-queue: see msgAddress).
func address(entity string, i int) string {
	if category(i) == broker.CategoryDeadLettered {
		return entity + broker.DeadLetterSuffix
	}
	return entity
}

// deadLetterQueues are the sub-queues the Dead-lettered pane shows, in the
// order bulk work goes through them.
var deadLetterQueues = [...]broker.SubQueue{broker.SubQueueDeadLetter, broker.SubQueueTransferDeadLetter}

// addresses returns every address whose messages pane i shows: both
// dead-letter sub-queues for the Dead-lettered pane, the entity otherwise.
func addresses(entity string, i int) []string {
	if category(i) != broker.CategoryDeadLettered {
		return []string{entity}
	}
	out := make([]string, len(deadLetterQueues))
	for k, s := range deadLetterQueues {
		out[k] = broker.SubQueueAddress(entity, s)
	}
	return out
}

// msgAddress returns the address m, shown in pane i, is received and
// settled at: its own sub-queue's on the Dead-lettered pane.
func msgAddress(entity string, i int, m *broker.Message) string {
	if category(i) == broker.CategoryDeadLettered && m != nil && m.SubQueue == broker.SubQueueTransferDeadLetter {
		return broker.SubQueueAddress(entity, broker.SubQueueTransferDeadLetter)
	}
	return address(entity, i)
}

// visibleRows returns how many rows pane i shows in the current layout (0
// when it is not visible).
func (ms *mainScreen) visibleRows(m *Model, i int) int {
	if s, ok := m.layout().Slot(i); ok {
		return s.Rows()
	}
	return 0
}

// syncLocalPanes fills the panes that are built here (see localPane) from
// the locks this dashboard holds.
func (ms *mainScreen) syncLocalPanes(m *Model) {
	for i := range m.panes {
		if !m.localPane(i) {
			continue
		}
		p := &m.panes[i]
		var keep int64 = -1
		if cur := p.current(); cur != nil {
			keep = cur.SequenceNumber
		}
		var all []*broker.Message
		if category(i) == broker.CategoryLocked || category(i) == broker.CategoryDeadLettered {
			all = m.heldInOrder(addresses(m.entity, i)...)
		}
		start := sort.Search(len(all), func(k int) bool { return all[k].SequenceNumber >= p.top })
		n := max(1, ms.visibleRows(m, i)) + 1
		if w := sort.Search(len(all), func(k int) bool { return all[k].SequenceNumber >= p.wantSeq }); p.wantSeq != 0 && w < len(all) && w >= start+n-1 {
			start, p.top, p.pos = w, all[w].SequenceNumber, 0 // the message asked for, below the window
		}
		p.rows = all[start:min(len(all), start+n)]
		p.loaded = true
		if p.wantSeq != 0 && slices.ContainsFunc(p.rows, func(x *broker.Message) bool { return x.SequenceNumber == p.wantSeq }) {
			keep, p.wantSeq = p.wantSeq, 0 // the message asked for
		}
		if p.wantSeq == 0 && m.followCursor(p, keep, n-1, true, len(p.rows) >= n) {
			// The top moved with the cursor's message: the window again.
			start = sort.Search(len(all), func(k int) bool { return all[k].SequenceNumber >= p.top })
			p.rows = all[start:min(len(all), start+n)]
			p.wantSeq = 0
			if k := slices.IndexFunc(p.rows, func(x *broker.Message) bool { return x.SequenceNumber == keep }); k >= 0 {
				p.cursor = k
			}
		}
		p.cursor = max(0, min(p.cursor, len(p.rows)-1))
	}
}
