package model

import (
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/ui"
)

// onClick selects what was clicked: an entity, a tab, a pane row.
func (m *Model) onClick(ms tea.Mouse) tea.Cmd {
	if ms.Button != tea.MouseLeft || m.top().modal() {
		return nil
	}
	l := m.layout()
	switch {
	case l.Sidebar.Contains(ms.X, ms.Y):
		i := m.entityTop + ms.Y - l.Sidebar.Y - 1 // the first line is the header
		if ms.Y > l.Sidebar.Y && i >= 0 && i < len(m.entities) && m.entities[i].Path != m.entity {
			return m.selectEntity(m.entities[i].Path)
		}
	case l.Tabs.Contains(ms.X, ms.Y):
		e, _ := m.currentEntity()
		if i := ui.TabAt(e.Counts, l.Tabs.W, ms.X-l.Tabs.X); i >= 0 {
			m.detail, m.entInfo, m.clients = nil, nil, nil
			return m.setFocus(i)
		}
	case m.top() == overMain:
		for _, s := range l.Panes {
			if !s.Rect.Contains(ms.X, ms.Y) {
				continue
			}
			m.focus = s.Index
			row := ms.Y - s.Rect.Y - ui.PaneChrome
			p := &m.panes[s.Index]
			if row >= 0 && row < min(s.Rows(), len(p.rows)) {
				p.cursor = row
				p.chose()
			}
			return nil
		}
	}
	return nil
}

// onWheel scrolls the pane under the pointer (or the detail view) by three
// rows.
func (m *Model) onWheel(ms tea.Mouse) tea.Cmd {
	d := 0
	switch ms.Button {
	case tea.MouseWheelUp:
		d = -3
	case tea.MouseWheelDown:
		d = 3
	default:
		return nil
	}
	switch m.top() {
	case overDialog, overHelp:
		return nil
	case overLog:
		m.log.scroll(m.common(), d)
		return nil
	case overClients:
		m.clients.scroll(d, m.viewPage())
		return nil
	case overInfo:
		m.entInfo.scroll(d, m.viewPage())
		return nil
	case overDetail:
		m.detail.scroll(d, m.viewPage(), len(m.detailLines()))
		return nil
	}
	for _, s := range m.layout().Panes {
		if s.Rect.Contains(ms.X, ms.Y) {
			m.focus = s.Index
		}
	}
	var cmds []tea.Cmd
	step := 1
	if d < 0 {
		step = -1
	}
	for k := 0; k < 3; k++ {
		cmds = append(cmds, m.move(step))
	}
	return tea.Batch(cmds...)
}
