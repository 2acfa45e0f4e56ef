package model

import (
	"fmt"
	"sort"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// View draws the frame. It only reads the state; its cost is bounded by
// the rows on screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "peeklock " + ui.Sanitize(m.entity)
	return v
}

// render builds the screen as a string (the tests compare it).
func (m *Model) render() string {
	c := m.common()
	l := m.layout()
	e, _ := m.currentEntity()
	s := ui.Screen{
		Layout:    l,
		Entities:  m.entityRows(),
		EntityTop: m.entityTop,
		Counts:    e.Counts,
		Focus:     m.focus,
		Help:      m.keys.ShortHelp(),
		Status:    m.status(),
	}
	for _, o := range m.stack() {
		if o == overLog {
			s.Cover = m.log.view(c, l.Width, l.HelpLine.Y)
		} else if o == overHelp {
			s.Cover = m.help.view(c, m.reason, l.Width, l.HelpLine.Y)
		}
		if s.Cover != nil {
			break
		}
	}
	if !m.listed && m.bar.err == nil {
		s.EntityNote = "loading…"
	}
	for _, x := range m.entities {
		if n := x.Counts.Count(broker.CategoryDeadLettered); n > 0 && x.Path != m.entity {
			s.OtherDLQ += n
			s.OtherDLQEntities++
		}
	}
	for _, slot := range l.Panes {
		s.Panes = append(s.Panes, m.paneView(slot))
	}
	switch m.areaView() {
	case overClients:
		s.DetailOpen = true
		s.DetailTitle, s.Help, s.DetailLines, s.DetailTop = m.clients.view(&m.keys)
	case overInfo:
		s.DetailOpen = true
		s.DetailTitle, s.Help, s.DetailLines, s.DetailTop = m.entInfo.view(&m.keys)
	case overDetail:
		s.DetailOpen = true
		s.DetailTitle, s.DetailLines, s.DetailTop = m.detail.view(m.detailLines())
	}
	switch {
	case m.isOpen(overDialog):
		d := m.dialog.view(c)
		s.Dialog = &d
	case m.job != nil:
		d := ui.ProgressDialog(c, ui.Progress{Title: m.job.title, Done: m.job.done, Failed: m.job.failed,
			Total: m.job.total, Elapsed: m.now.Sub(m.job.start), Cancelled: m.job.cancelled})
		s.Dialog = &d
	case m.search != nil:
		d := m.searchDialog(c)
		s.Dialog = &d
	}
	return ui.Render(c, s)
}

// entityRows builds the entity list.
func (m *Model) entityRows() []ui.EntityRow {
	rows := make([]ui.EntityRow, len(m.entities))
	for i, e := range m.entities {
		rows[i] = ui.EntityRow{Entity: e, Current: e.Path == m.entity}
		if h := m.history[e.Path]; h != nil {
			rows[i].Depth = h.vals
		}
	}
	return rows
}

// paneView builds what one visible pane draws: its rows on screen with the
// locks held here laid over them, and the flashing ghosts of ended locks.
func (m *Model) paneView(slot ui.PaneSlot) ui.PaneState {
	i := slot.Index
	p := &m.panes[i]
	e, _ := m.currentEntity()
	ps := ui.PaneState{
		Category:     category(i),
		Counts:       e.Counts,
		Cursor:       p.cursor,
		Focused:      i == m.focus && m.detail == nil,
		Position:     p.pos,
		LockDuration: e.Settings.Normalize().LockDuration,
		Sessions:     e.Settings.RequiresSession,
	}
	n := slot.Rows()
	msgs := p.rows
	if len(msgs) > n {
		msgs = msgs[:n]
		ps.MoreBelow = true
	}
	rows := make([]ui.Row, 0, len(msgs)+len(m.ghosts))
	for _, x := range msgs {
		r := ui.Row{Msg: x, Selected: p.selected[x.SequenceNumber]}
		if h := m.held[heldKey{msgAddress(m.entity, i, x), x.SequenceNumber}]; h != nil {
			y := *x
			y.LockToken, y.LockedUntil = h.msg.LockToken, h.msg.LockedUntil
			r.Msg, r.Held, r.AutoRenew = &y, true, h.autoRenew
		}
		rows = append(rows, r)
	}
	if category(i) == broker.CategoryLocked && len(m.ghosts) > 0 {
		rows = m.withGhosts(rows, n, p)
		// The flashing rows of ended locks sit among the others: the
		// cursor is drawn on its message, not at its index.
		ps.Cursor = -1
		if cur := p.current(); cur != nil {
			for k, r := range rows {
				if r.Flash == "" && r.Msg.SequenceNumber == cur.SequenceNumber {
					ps.Cursor = k
				}
			}
		}
	}
	ps.Rows = rows
	switch {
	case m.listed && m.entity == "" && !m.caps.Supports(broker.CanListEntities):
		ps.Empty = fmt.Sprintf("no entity: press %s to name a queue or address", m.keys.Jump.Help().Key)
	case !m.caps.Supports(broker.CanBrowse) && !m.localPane(i):
		ps.Empty = "browsing is not supported: " + m.caps.Reason(broker.CanBrowse)
	case m.localPane(i) && category(i) == broker.CategoryLocked:
		ps.Empty = "no locks held by this dashboard (this endpoint shows only its own locks)"
	case !m.caps.Supports(broker.CanBrowse):
		ps.Empty = "browsing is not supported: " + m.caps.Reason(broker.CanBrowse)
	case m.isTopic():
		ps.Empty = fmt.Sprintf("a topic holds no messages: its subscriptions do (%s info, %s next entity)",
			m.keys.Info.Help().Key, m.keys.NextEntity.Help().Key)
	case p.err != nil:
		ps.Empty = "error: " + p.err.Error()
	case m.listed && m.entity == "":
		ps.Empty = "no entity: create a queue or subscription (admin API, SDK or --config)"
	case !p.loaded:
		ps.Empty = "loading…"
	}
	note := ""
	if m.filter.active() {
		note = "filter: " + m.filter.String()
		if p.scanned > 0 {
			note += fmt.Sprintf(" (%d scanned", p.scanned)
			if p.partial {
				note += ", more not scanned yet"
			}
			note += ")"
		}
	}
	if p.seeking {
		note += " seeking…"
	}
	if k := len(p.selected); k > 0 {
		note += fmt.Sprintf(" %d selected", k)
	}
	ps.Note = note
	return ps
}

// withGhosts merges the ghosts of the current entity into the Locked rows,
// in sequence order, within the window.
func (m *Model) withGhosts(rows []ui.Row, n int, p *paneState) []ui.Row {
	present := make(map[int64]bool, len(rows))
	for _, r := range rows {
		present[r.Msg.SequenceNumber] = true
	}
	added := false
	for _, g := range m.ghosts {
		if g.entity != m.entity || present[g.msg.SequenceNumber] || g.msg.SequenceNumber < p.top {
			continue
		}
		rows = append(rows, ui.Row{Msg: g.msg, Flash: g.kind})
		added = true
	}
	if !added {
		return rows
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].Msg.SequenceNumber < rows[b].Msg.SequenceNumber })
	if len(rows) > n {
		rows = rows[:n]
	}
	return rows
}

// status builds the status bar.
func (m *Model) status() ui.Status {
	s := ui.Status{
		Endpoint: m.client.Endpoint(),
		Refresh:  m.opts.Refresh,
		Paused:   m.paused,
		ReadOnly: m.readOnly,
		Session:  m.sessionStatus(),
		LogKey:   m.keys.Log.Help().Key,
		Zoomed:   m.zoom,
	}
	if m.layout().Sidebar.W == 0 {
		s.Entity = m.entity
	}
	m.bar.view(m.now, &s)
	return s
}
