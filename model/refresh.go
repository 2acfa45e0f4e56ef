package model

import (
	"context"
	"errors"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// tickCmd waits one refresh interval on the model's clock.
func (m *Model) tickCmd() tea.Cmd {
	id, clock, d := m.sched.tickID, m.clock, m.opts.Refresh
	return func() tea.Msg {
		<-clock.After(d)
		return tickMsg{id: id}
	}
}

// after returns a command that delivers msg after d on clock.
func after(clock clockwork.Clock, d time.Duration, msg tea.Msg) tea.Cmd {
	return func() tea.Msg {
		<-clock.After(d)
		return msg
	}
}

// waitEvents reads the next events from ch: it blocks for one, then takes
// what else is ready (up to 256) without blocking. Update re-arms it.
func waitEvents(ch <-chan broker.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{closed: true}
		}
		evs := []broker.Event{ev}
		for len(evs) < 256 {
			select {
			case e, ok := <-ch:
				if !ok {
					return eventsMsg{events: evs, closed: true}
				}
				evs = append(evs, e)
			default:
				return eventsMsg{events: evs}
			}
		}
		return eventsMsg{events: evs}
	}
}

// requestRefresh asks for a refresh now: it starts one unless one is in
// flight, in which case another follows right after it.
func (m *Model) requestRefresh() tea.Cmd {
	return m.startRefresh()
}

// eventRefresh asks for a refresh because events arrived, at most one per
// eventDebounce.
func (m *Model) eventRefresh() tea.Cmd {
	if m.paused {
		return nil
	}
	start, kick := m.sched.event(m.now)
	if start {
		return m.startRefresh()
	}
	if kick == 0 {
		return nil
	}
	return after(m.clock, eventDebounce, kickMsg{id: kick})
}

// startRefresh starts a refresh: the entity list with counts, and a Browse
// window for every visible pane, sized to it. It never runs while another
// is in flight.
func (m *Model) startRefresh() tea.Cmd {
	gen, ok := m.sched.begin(m.now)
	if !ok {
		return nil
	}
	entity := m.entity
	c, caps, timeout, scan := m.client, m.caps, m.opts.Timeout, m.opts.FilterScan
	at := m.now
	var reqs []paneRequest
	if caps.Supports(broker.CanBrowse) && !m.isTopic() { // a topic holds no messages itself
		for _, slot := range m.layout().Panes {
			i := slot.Index
			if category(i) == broker.CategoryLocked && !caps.Supports(broker.CanSeeAllLocks) {
				continue // built from the locks this dashboard holds
			}
			p := &m.panes[i]
			reqs = append(reqs, paneRequest{index: i, top: p.top, rows: slot.Rows() + 1, filter: m.filter})
		}
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		msg := refreshMsg{gen: gen, entity: entity, at: at}
		msg.state, msg.notice = broker.StatusOf(c)
		ents, err := c.Entities(ctx)
		if err != nil {
			msg.listErr = err
		} else {
			msg.entities = ents
		}
		if entity == "" {
			entity = firstEntity(ents)
			msg.entity = entity
		}
		if entity == "" {
			return msg
		}
		for _, r := range reqs {
			res := paneResult{req: r}
			req := broker.BrowseRequest{Entity: entity, Category: category(r.index), FromSequence: r.top, Max: r.rows,
				DueOrder: category(r.index) == broker.CategoryScheduled}
			if r.filter.active() {
				res.msgs, res.scanned, res.partial, res.err = filteredBrowse(ctx, c, req, r.filter, scan)
			} else {
				res.msgs, res.err = c.Browse(ctx, req)
			}
			msg.panes = append(msg.panes, res)
		}
		return msg
	}
}

// firstEntity picks the entity shown when none was asked for: the first
// queue or subscription (a topic holds no messages itself).
func firstEntity(ents []broker.Entity) string {
	for _, e := range ents {
		if e.Kind != broker.KindTopic {
			return e.Path
		}
	}
	return ""
}

// applyRefresh takes a refresh result into the state.
func (m *Model) applyRefresh(msg refreshMsg) tea.Cmd {
	if !m.sched.finish(msg.gen) {
		return nil
	}
	before := m.layout()
	switch {
	case msg.listErr == nil:
		m.bar.conn = ui.ConnConnected
		m.entities = msg.entities
		m.keepNamed()
		m.listed = true
		if m.remembered {
			// The entity remembered may be gone: show the first then.
			m.remembered = false
			if _, ok := m.currentEntity(); !ok {
				m.switchEntity(firstEntity(m.entities))
				m.sched.want = true
			}
		}
		m.entGen++
		m.sampleHistory(msg.at)
	case errors.Is(msg.listErr, broker.ErrNotSupported):
		m.bar.conn = ui.ConnConnected
		if len(m.entities) == 0 && m.entity != "" {
			m.entities = []broker.Entity{{Path: m.entity}}
		}
	default:
		m.bar.conn = connState(msg.listErr)
		m.setErr(msg.listErr)
	}
	if msg.state != "" && msg.state != ui.ConnConnected {
		m.bar.conn = msg.state // e.g. "reconnecting (attempt 3)"
	}
	m.bar.notice = msg.notice
	if m.entity == "" {
		m.entity = msg.entity
	}
	after := m.layout() // with the new counts
	if msg.entity == m.entity {
		for _, r := range msg.panes {
			m.applyPane(r, msg.at, after)
		}
	}
	m.main.keepEntityVisible(m)
	if !slices.Equal(before.Panes, after.Panes) {
		// New counts moved the panes: their windows follow.
		m.sched.want = true
		if after.Main.W != before.Main.W {
			m.detail.rerender(m)
		}
	}
	if m.sched.want {
		return m.startRefresh()
	}
	return nil
}

// connState maps an error of the entity list to a connection state.
func connState(err error) string {
	switch broker.CodeOf(err) {
	case broker.CodeConnectionLost, broker.CodeClosed:
		return ui.ConnDisconnected
	}
	return ui.ConnError
}

// applyPane takes one pane's window, unless the pane moved since it was
// asked for; l is the layout now, which the cursor keeps to.
func (m *Model) applyPane(r paneResult, at time.Time, l ui.Layout) {
	p := &m.panes[r.req.index]
	if p.top != r.req.top || p.seeking || !r.req.filter.equal(m.filter) {
		return // stale: the next refresh brings the right window
	}
	if r.err != nil {
		p.err = r.err
		m.setErr(r.err)
		return
	}
	p.err = nil
	var keep int64 = -1
	if cur := p.current(); cur != nil {
		keep = cur.SequenceNumber
	}
	if category(r.req.index) == broker.CategoryLocked {
		m.detectEndedLocks(p.rows, r.msgs, at)
	}
	p.rows = r.msgs
	m.find.learn(m, m.entity, r.msgs)
	p.scanned, p.partial = r.scanned, r.partial
	p.loaded = true
	if p.pos == 0 && p.top == 0 {
		p.pos = 1
	}
	if p.wantSeq != 0 {
		switch {
		case slices.ContainsFunc(p.rows, func(x *broker.Message) bool { return x.SequenceNumber == p.wantSeq }):
			keep, p.wantSeq = p.wantSeq, 0 // the message asked for: the cursor goes there
			p.pendingCursor = cursorKeep
		case !r.req.dueOrder() && len(p.rows) >= r.req.rows && p.wantSeq > p.rows[len(p.rows)-1].SequenceNumber:
			// Further down than the window reaches: start it there.
			if m.filter.active() {
				p.filterTops = append(p.filterTops, p.top)
			}
			p.top, p.pos = p.wantSeq, 0
			m.sched.want = true
		}
	}
	// The rows on screen now: the layout may have changed since the request.
	shown := r.req.rows - 1
	if slot, ok := l.Slot(r.req.index); ok && slot.Rows() > 0 {
		shown = slot.Rows()
	}
	switch p.pendingCursor {
	case cursorFirst:
		p.cursor = 0
	case cursorLast:
		p.cursor = min(len(p.rows), max(1, shown)) - 1
	default:
		if p.wantSeq == 0 && m.followCursor(p, keep, shown, !r.req.dueOrder(), len(p.rows) >= r.req.rows) {
			m.sched.want = true // the window moved with the cursor's message
		}
	}
	p.pendingCursor = cursorKeep
	limit := min(len(p.rows), max(1, shown))
	p.cursor = max(0, min(p.cursor, limit-1))
	// A selected message that left the window by scrolling stays selected;
	// one the window shows is gone leaves the selection.
	e, _ := m.currentEntity()
	p.pruneSelection(r.req.index, e.Counts.Count(category(r.req.index)), m.listed && !e.Counts.Unknown)
	if m.detail != nil && m.detail.pane == r.req.index {
		m.detail.refresh(p.rows)
	}
}
