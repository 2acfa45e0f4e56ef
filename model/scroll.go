package model

import (
	"context"
	"math"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
)

// localPane reports whether pane i is built here rather than browsed: the
// Locked pane of an endpoint that cannot show others' locks, or any pane of
// one that cannot browse.
func (m *Model) localPane(i int) bool {
	if !m.caps.Supports(broker.CanBrowse) {
		return true
	}
	return category(i) == broker.CategoryLocked && !m.caps.Supports(broker.CanSeeAllLocks)
}

// move moves the cursor of the focused pane by d rows; past the edges the
// window scrolls, by one message.
func (ms *mainScreen) move(m *Model, d int) tea.Cmd {
	p := m.focused()
	p.chose()
	rows := max(1, ms.visibleRows(m, m.focus))
	n := p.cursor + d
	switch {
	case n >= 0 && n < min(rows, len(p.rows)):
		p.cursor = n
		return nil
	case n >= rows && len(p.rows) > rows:
		return ms.scrollDown(m, 1)
	case n < 0:
		return ms.scrollUp(m, 1, cursorFirst)
	}
	return nil
}

// scrollDown moves the window down by k rows (known from the window).
func (ms *mainScreen) scrollDown(m *Model, k int) tea.Cmd {
	p := m.focused()
	if k <= 0 || k >= len(p.rows) {
		return nil
	}
	if m.filter.active() {
		p.filterTops = append(p.filterTops, p.top)
	}
	p.top = p.rows[k].SequenceNumber
	p.rows = p.rows[k:]
	if p.pos > 0 {
		p.pos += int64(k)
	}
	p.cursor = max(0, min(p.cursor, len(p.rows)-1))
	return m.requestRefresh()
}

// scrollUp moves the window up by k messages. The messages before the
// window are not known, so the new start is found by bisection over
// sequence numbers in a command; a filtered window goes back to where it
// was.
func (ms *mainScreen) scrollUp(m *Model, k int, place cursorPlace) tea.Cmd {
	p := m.focused()
	if p.top == 0 || p.seeking {
		if place == cursorFirst {
			p.cursor = 0
		}
		return nil
	}
	if m.localPane(m.focus) {
		p.top = 0
		p.pos = 1
		p.pendingCursor = place
		return nil
	}
	if m.filter.active() {
		if n := len(p.filterTops); n > 0 {
			p.top = p.filterTops[n-1]
			p.filterTops = p.filterTops[:n-1]
		} else {
			p.top = 0
		}
		p.pos = 0
		p.pendingCursor = place
		return m.requestRefresh()
	}
	p.seeking = true
	return ms.seekCmd(m, m.focus, p.top, k, place)
}

// pageUp scrolls up by a screen.
func (ms *mainScreen) pageUp(m *Model) tea.Cmd {
	p := m.focused()
	p.chose()
	if p.cursor > 0 {
		p.cursor = 0
		return nil
	}
	return ms.scrollUp(m, max(1, ms.visibleRows(m, m.focus)), cursorFirst)
}

// pageDown scrolls down by a screen.
func (ms *mainScreen) pageDown(m *Model) tea.Cmd {
	p := m.focused()
	p.chose()
	rows := max(1, ms.visibleRows(m, m.focus))
	if len(p.rows) <= rows {
		p.cursor = max(0, len(p.rows)-1)
		return nil
	}
	return ms.scrollDown(m, rows)
}

// toTop goes to the first message of the pane.
func (ms *mainScreen) toTop(m *Model) tea.Cmd {
	p := m.focused()
	p.chose()
	p.cursor = 0
	if p.top == 0 {
		return nil
	}
	p.top, p.pos, p.filterTops = 0, 1, nil
	p.pendingCursor = cursorFirst
	return m.requestRefresh()
}

// toBottom goes to the last message of the pane.
func (ms *mainScreen) toBottom(m *Model) tea.Cmd {
	p := m.focused()
	p.chose()
	rows := max(1, ms.visibleRows(m, m.focus))
	if len(p.rows) <= rows && (p.top == 0 || m.localPane(m.focus)) {
		p.cursor = max(0, len(p.rows)-1)
		return nil
	}
	if m.filter.active() || m.localPane(m.focus) {
		return ms.pageDown(m) // a filtered window can only walk forward
	}
	p.seeking = true
	return ms.seekCmd(m, m.focus, math.MaxInt64, rows, cursorLast)
}

// seekCmd finds, by bisection over sequence numbers, the largest window
// start from which at least k messages of the pane's category lie before
// before, and returns it as a seekMsg. Each probe is one Browse of at most
// k messages, so the cost is bounded by the window, not by the queue.
func (ms *mainScreen) seekCmd(m *Model, i int, before int64, k int, place cursorPlace) tea.Cmd {
	c, timeout, entity := m.client, m.opts.Timeout, m.entity
	cat := category(i)
	if cat == broker.CategoryScheduled {
		return ms.seekDueCmd(m, i, before, k, place)
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		count := func(from int64) (int, *broker.Message, error) {
			msgs, err := c.Browse(ctx, broker.BrowseRequest{Entity: entity, Category: cat, FromSequence: from, Max: k})
			if err != nil {
				return 0, nil, err
			}
			n := 0
			for _, x := range msgs {
				if x.SequenceNumber < before {
					n++
				}
			}
			var first *broker.Message
			if len(msgs) > 0 {
				first = msgs[0]
			}
			return n, first, nil
		}
		n0, _, err := count(0)
		if err != nil {
			return seekMsg{index: i, entity: entity, err: err}
		}
		if n0 < k {
			return seekMsg{index: i, entity: entity, top: 0, moved: -int64(n0), cursorTo: int(place)}
		}
		lo, hi := int64(0), before // invariant: count(lo) >= k
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			n, _, err := count(mid)
			if err != nil {
				return seekMsg{index: i, entity: entity, err: err}
			}
			if n >= k {
				lo = mid
			} else {
				hi = mid
			}
		}
		_, first, err := count(lo)
		if err != nil {
			return seekMsg{index: i, entity: entity, err: err}
		}
		top := lo
		if first != nil {
			top = first.SequenceNumber
		}
		return seekMsg{index: i, entity: entity, top: top, moved: -int64(k), cursorTo: int(place)}
	}
}

// applySeek takes the new start of a window found by seekCmd.
func (ms *mainScreen) applySeek(m *Model, msg seekMsg) tea.Cmd {
	p := &m.panes[msg.index]
	if msg.entity != m.entity || !p.seeking {
		return nil
	}
	p.seeking = false
	if msg.err != nil {
		m.setErr(msg.err)
		return nil
	}
	p.top = msg.top
	switch {
	case msg.top == 0:
		p.pos = 1
	case cursorPlace(msg.cursorTo) == cursorLast:
		e, _ := m.currentEntity()
		p.pos = max(1, e.Counts.Count(category(msg.index))+msg.moved+1)
	case p.pos > 0:
		p.pos = max(1, p.pos+msg.moved)
	}
	p.pendingCursor = cursorPlace(msg.cursorTo)
	return m.requestRefresh()
}

// seekDueScan is the most scheduled messages seekDueCmd reads to find where
// a window in due order starts.
const seekDueScan = 10_000

// seekDueCmd finds the start of the Scheduled pane's window k messages
// before the message numbered before. A window in due order cannot be
// bisected by sequence number, so it reads the pane from its first message
// (at most seekDueScan of them) and counts back; a message no longer
// scheduled, or further than that, goes back to the first; before
// math.MaxInt64 is the bottom of the pane.
func (ms *mainScreen) seekDueCmd(m *Model, i int, before int64, k int, place cursorPlace) tea.Cmd {
	c, timeout, entity := m.client, m.opts.Timeout, m.entity
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		msgs, err := c.Browse(ctx, broker.BrowseRequest{Entity: entity, Category: broker.CategoryScheduled, Max: seekDueScan, DueOrder: true})
		if err != nil {
			return seekMsg{index: i, entity: entity, err: err}
		}
		at := len(msgs) // past the last: the bottom of the pane
		if before != math.MaxInt64 {
			at = slices.IndexFunc(msgs, func(x *broker.Message) bool { return x.SequenceNumber == before })
		}
		if at <= k {
			return seekMsg{index: i, entity: entity, top: 0, moved: -int64(max(at, 0)), cursorTo: int(place)}
		}
		return seekMsg{index: i, entity: entity, top: msgs[at-k].SequenceNumber, moved: -int64(k), cursorTo: int(place)}
	}
}
