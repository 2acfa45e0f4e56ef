package model

import (
	"fmt"
	"sort"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// mainScreen is the main screen, the bottom of the stack: the entity list,
// the tabs, the panes, the status bar and the one-line help, with the
// progress boxes of bulk work and of the search for a request floating
// over them. It owns the geometry of the screen; the entities and the
// panes, which every view acts on, are the root model's. It runs the main
// actions of the action table, moves the cursors and scrolls the panes.
type mainScreen struct {
	// zoom gives the focused pane the whole screen; sidebar hides or shows
	// the entity list, scrolled to entityTop.
	zoom      bool
	sidebar   ui.SidebarMode
	entityTop int
}

// id names the main screen.
func (ms *mainScreen) id() overlay { return overMain }

// isOpen is true: the main screen is always there.
func (ms *mainScreen) isOpen() bool { return true }

// modal is false: keys the main screen does not know go nowhere.
func (ms *mainScreen) modal() bool { return false }

// key runs the action of the key pressed, or shows why it is disabled
// (updateKeybindings). It takes every key.
func (ms *mainScreen) key(m *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	for _, r := range m.keys.All() {
		if !keymap.Pressed(msg, *r.Binding) {
			continue
		}
		if why := m.reason(r.Binding); why != "" {
			code := broker.CodeNotSupported
			if why == readOnlyReason {
				code = broker.CodeReadOnly
			}
			m.setErr(&broker.Error{Code: code, Message: r.Binding.Help().Desc + " is disabled: " + why})
			return nil, true
		}
		a := actionTable[r.Action]
		return a.run(m, r.Binding), true
	}
	return nil, true
}

// click selects what was clicked: an entity, a tab (which closes the
// views of the main area), a pane row. It takes every click.
func (ms *mainScreen) click(m *Model, at tea.Mouse) (tea.Cmd, bool) {
	l := m.layout()
	switch {
	case l.Sidebar.Contains(at.X, at.Y):
		i := ms.entityTop + at.Y - l.Sidebar.Y - 1 // the first line is the header
		if at.Y > l.Sidebar.Y && i >= 0 && i < len(m.entities) && m.entities[i].Path != m.entity {
			return m.selectEntity(m.entities[i].Path), true
		}
	case l.Tabs.Contains(at.X, at.Y):
		e, _ := m.currentEntity()
		if i := ui.TabAt(e.Counts, l.Tabs.W, at.X-l.Tabs.X); i >= 0 {
			for _, v := range m.views() {
				if v.isOpen() && !v.modal() {
					v.close(m)
				}
			}
			return ms.setFocus(m, i), true
		}
	default:
		for _, s := range l.Panes {
			if !s.Rect.Contains(at.X, at.Y) {
				continue
			}
			m.focus = s.Index
			row := at.Y - s.Rect.Y - ui.PaneChrome
			p := &m.panes[s.Index]
			if row >= 0 && row < min(s.Rows(), len(p.rows)) {
				p.cursor = row
				p.chose()
			}
			return nil, true
		}
	}
	return nil, true
}

// wheel focuses the pane under the pointer and moves its cursor by delta
// rows, one at a time.
func (ms *mainScreen) wheel(m *Model, at tea.Mouse, delta int) (tea.Cmd, bool) {
	for _, s := range m.layout().Panes {
		if s.Rect.Contains(at.X, at.Y) {
			m.focus = s.Index
		}
	}
	var cmds []tea.Cmd
	step := 1
	if delta < 0 {
		step = -1
	}
	for k := 0; k < max(delta, -delta); k++ {
		cmds = append(cmds, ms.move(m, step))
	}
	return tea.Batch(cmds...), true
}

// frame draws the entity list, the tabs, the panes, the status bar, the
// one-line help and the progress of bulk work or of a search.
func (ms *mainScreen) frame(m *Model, c *ui.Common, s *ui.Screen) {
	l := s.Layout
	e, _ := m.currentEntity()
	s.Entities, s.EntityTop = ms.entityRows(m), ms.entityTop
	s.Counts, s.Focus = e.Counts, m.focus
	s.Help = m.keys.ShortHelp()
	s.Status = ms.status(m)
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
		s.Panes = append(s.Panes, ms.paneView(m, slot))
	}
	switch {
	case m.bulk.job != nil:
		d := m.bulk.job.dialog(c, m.now)
		s.Dialog = &d
	case m.find.search != nil:
		d := m.find.search.dialog(c, m.now)
		s.Dialog = &d
	}
}

// close does nothing: the main screen is always open.
func (ms *mainScreen) close(*Model) {}

// entityRows builds the entity list.
func (ms *mainScreen) entityRows(m *Model) []ui.EntityRow {
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
func (ms *mainScreen) paneView(m *Model, slot ui.PaneSlot) ui.PaneState {
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
		rows = ms.withGhosts(m, rows, n, p)
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
func (ms *mainScreen) withGhosts(m *Model, rows []ui.Row, n int, p *paneState) []ui.Row {
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
func (ms *mainScreen) status(m *Model) ui.Status {
	s := ui.Status{
		Endpoint: m.client.Endpoint(),
		Refresh:  m.opts.Refresh,
		Paused:   m.paused,
		ReadOnly: m.readOnly,
		Session:  m.sessionStatus(),
		LogKey:   m.keys.Log.Help().Key,
		Zoomed:   ms.zoom,
	}
	if m.layout().Sidebar.W == 0 {
		s.Entity = m.entity
	}
	m.bar.view(m.now, &s)
	return s
}
