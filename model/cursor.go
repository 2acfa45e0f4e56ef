package model

import (
	"fmt"
	"slices"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// settleGuard is how long after the row under the cursor changed by
// itself (its message gone, another in its place) a key that acts on that
// row is refused: long enough for a key already on its way to have been
// meant for the row that was there.
const settleGuard = time.Second

// followCursor puts the cursor of pane p, whose rows just changed, back on
// the message it was on (keep, -1 for none), wherever rows above it
// appeared or vanished; limit is how many rows are on screen. When that
// message went below the screen the window scrolls down with it; when it
// is gone the cursor stops on the next one (or the last), and the change
// is noted (p.moved) so that a settling key does not act on a row the
// user did not choose. ordered is false for a window not in sequence order
// (the Scheduled pane in due order), where a message not found is taken as
// gone and the cursor keeps its place; full says that the window holds as
// many rows as were asked for, so that more may follow its last. It reports whether the window
// moved, so that a refresh follows.
func (m *Model) followCursor(p *paneState, keep int64, limit int, ordered, full bool) (moved bool) {
	limit = max(1, limit)
	if keep < 0 {
		return false // an empty pane: whatever comes was never under the cursor
	}
	i := slices.IndexFunc(p.rows, func(x *broker.Message) bool { return x.SequenceNumber == keep })
	switch {
	case i >= 0 && i < limit:
		p.cursor = i
	case i >= limit:
		// Rows appeared above: scroll down by as many, the row stays.
		k := i - (limit - 1)
		if m.filter.active() {
			p.filterTops = append(p.filterTops, p.top)
		}
		p.top = p.rows[k].SequenceNumber
		p.rows = p.rows[k:]
		if p.pos > 0 {
			p.pos += int64(k)
		}
		p.cursor = limit - 1
		return true
	case !ordered && i < 0:
		p.cursor = max(0, min(p.cursor, len(p.rows)-1, limit-1))
		if len(p.rows) > 0 {
			p.noteMoved(m.now, fmt.Sprintf("sequence number %d is gone, the cursor is on %d now", keep, p.rows[p.cursor].SequenceNumber))
		}
	case full && len(p.rows) > 0 && keep > p.rows[len(p.rows)-1].SequenceNumber:
		// Further below than the window reaches: start it there.
		if m.filter.active() {
			p.filterTops = append(p.filterTops, p.top)
		}
		p.top, p.pos, p.wantSeq = keep, 0, keep
		return true
	default:
		// Gone: the next message, or the last one if it was the last.
		next := slices.IndexFunc(p.rows, func(x *broker.Message) bool { return x.SequenceNumber > keep })
		if next < 0 || next >= limit {
			next = min(len(p.rows), limit) - 1
		}
		p.cursor = max(0, next)
		if len(p.rows) > 0 {
			p.noteMoved(m.now, fmt.Sprintf("sequence number %d is gone, the cursor is on %d now", keep, p.rows[p.cursor].SequenceNumber))
		}
	}
	return false
}

// noteMoved records that the row under the cursor changed by itself.
func (p *paneState) noteMoved(now time.Time, why string) {
	p.movedAt, p.movedWhy = now, why
}

// chose records that the user put the cursor where it is.
func (p *paneState) chose() { p.movedAt, p.movedWhy = time.Time{}, "" }

// cursorJustMoved returns why a key that acts on the row under the cursor
// must wait: the row changed by itself less than settleGuard ago. A key
// acting on a selection or in the detail view never waits.
func (ms *mainScreen) cursorJustMoved(m *Model) string {
	p := m.focused()
	if m.detail != nil || len(p.selected) > 0 || p.movedAt.IsZero() || m.now.Sub(p.movedAt) >= settleGuard {
		return ""
	}
	return "the row under the cursor changed by itself just now (" + p.movedWhy + "): look, then press the key again"
}
