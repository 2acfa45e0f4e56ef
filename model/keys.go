package model

import (
	"fmt"
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// ActionError is the error shown when a key cannot do what it does in the
// current state (no message under the cursor, no lock held, wrong pane).
type ActionError struct {
	// Action is the key's help text ("complete").
	Action string
	// Reason says why not.
	Reason string
}

// Error returns "action: reason".
func (e *ActionError) Error() string { return e.Action + ": " + e.Reason }

// refuse shows why an action cannot run.
func (m *Model) refuse(b *key.Binding, reason string) tea.Cmd {
	m.setErr(&ActionError{Action: b.Help().Desc, Reason: reason})
	return nil
}

// onKey hands a key press down the stack, top first: a modal view keeps
// every key, a view of the main area lets through the ones it does not
// take, and the main screen runs the key's action. esc stops a search for
// a request before any view of the main area takes it.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		return m.quit()
	}
	stopSearch := m.find.search != nil && m.bulk.job == nil && keymap.Pressed(msg, m.keys.Back)
	for _, v := range m.stack() {
		if stopSearch && !v.modal() {
			m.find.cancel(m)
			return nil
		}
		if cmd, taken := v.key(m, msg); taken || v.modal() {
			return cmd
		}
	}
	return nil
}

// quit ends the program.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.Close()
	return tea.Quit
}

// back is esc on the main screen: cancel bulk work, cancel the search for
// a request, leave a jump, clear the filter, clear the selection, in that
// order.
func (ms *mainScreen) back(m *Model) tea.Cmd {
	switch {
	case m.bulk.job != nil:
		m.bulk.cancel()
		return nil
	case m.find.search != nil:
		m.find.cancel(m)
		return nil
	case len(m.jumps) > 0:
		return m.popJump()
	case m.filter.active():
		m.filter = filterSpec{}
		for i := range m.panes {
			m.panes[i].reset()
		}
		m.setInfo("filter cleared")
		return m.requestRefresh()
	case len(m.panes[m.focus].selected) > 0:
		m.panes[m.focus].clearSelection()
		return nil
	}
	return nil
}

// togglePause pauses or resumes live updates.
func (m *Model) togglePause() tea.Cmd {
	m.paused = !m.paused
	if m.paused {
		m.setInfo("paused: press p to resume live updates")
		return nil
	}
	m.setInfo("live")
	return m.requestRefresh()
}

// setFocus focuses pane i.
func (ms *mainScreen) setFocus(m *Model, i int) tea.Cmd {
	if i == m.focus {
		return nil
	}
	before := m.layout()
	m.focus = i
	return ms.relayout(m, before)
}

// relayout asks for a refresh when the panes on screen changed from
// before, or the focused one has no window yet, since the Browse windows
// follow the layout; an open view takes the new width.
func (ms *mainScreen) relayout(m *Model, before ui.Layout) tea.Cmd {
	after := m.layout()
	if after.Main.W != before.Main.W {
		m.detail.rerender(m)
	}
	if !m.panes[m.focus].loaded || !slices.Equal(before.Panes, after.Panes) {
		return m.requestRefresh()
	}
	return nil
}

// toggleZoom gives the focused pane the whole screen, or gives it back.
func (ms *mainScreen) toggleZoom(m *Model) tea.Cmd {
	before := m.layout()
	ms.zoom = !ms.zoom
	if ms.zoom {
		m.setInfo(fmt.Sprintf("zoomed on the %s pane (%s: back)", category(m.focus), m.keys.Zoom.Help().Key))
	}
	return ms.relayout(m, before)
}

// toggleSidebar hides the entity list, or shows it (also on a screen
// narrower than the one it shows on by itself).
func (ms *mainScreen) toggleSidebar(m *Model) tea.Cmd {
	before := m.layout()
	if before.Sidebar.W > 0 {
		ms.sidebar = ui.SidebarHidden
	} else {
		ms.sidebar = ui.SidebarShown
	}
	if ms.zoom {
		ms.zoom = false
	}
	ms.keepEntityVisible(m)
	return ms.relayout(m, before)
}

// stepEntity selects the next (+1) or previous (-1) entity of the list;
// a topic opens its information view (see selectEntity).
func (ms *mainScreen) stepEntity(m *Model, d int) tea.Cmd {
	n := len(m.entities)
	if n == 0 {
		return nil
	}
	cur := -1
	for i, e := range m.entities {
		if e.Path == m.entity {
			cur = i
		}
	}
	i := ((cur+d)%n + n) % n
	if cur < 0 && d < 0 {
		i = n - 1
	}
	if m.entities[i].Path == m.entity {
		return nil
	}
	return m.selectEntity(m.entities[i].Path)
}

// selectEntity shows entity path, by key, click or jump. A topic holds no
// messages itself, so its information view opens, with its subscriptions.
// The choice is remembered for the endpoint (Options.StateDir).
func (m *Model) selectEntity(path string) tea.Cmd {
	m.switchEntity(path)
	cmds := []tea.Cmd{m.requestRefresh(), m.rememberEntity()}
	if m.isTopic() && m.entInfo == nil {
		cmds = append(cmds, openInfo(m))
	}
	return tea.Batch(cmds...)
}

// isTopic reports whether the entity shown is a topic.
func (m *Model) isTopic() bool {
	e, ok := m.currentEntity()
	return ok && e.Kind == broker.KindTopic
}

// switchEntity shows another entity: its panes start at the top.
func (m *Model) switchEntity(path string) {
	if path == m.entity {
		return
	}
	m.entity = path
	for i := range m.panes {
		m.panes[i].reset()
	}
	m.detail = nil
	m.main.keepEntityVisible(m)
}

// keepEntityVisible scrolls the entity list to the selected entity.
func (ms *mainScreen) keepEntityVisible(m *Model) {
	h := m.layout().Sidebar.H - 1 // minus the header
	if h <= 0 {
		return
	}
	for i, e := range m.entities {
		if e.Path != m.entity {
			continue
		}
		if i < ms.entityTop {
			ms.entityTop = i
		}
		if i >= ms.entityTop+h {
			ms.entityTop = i - h + 1
		}
	}
	ms.entityTop = max(0, min(ms.entityTop, len(m.entities)-1))
}

// focused returns the focused pane.
func (m *Model) focused() *paneState { return &m.panes[m.focus] }

// toggleSelect selects or unselects the row under the cursor and moves down.
func (ms *mainScreen) toggleSelect(m *Model) tea.Cmd {
	p := m.focused()
	cur := p.current()
	if cur == nil {
		return m.refuse(&m.keys.Select, "no message here")
	}
	p.allSelected = false
	if p.selected[cur.SequenceNumber] {
		delete(p.selected, cur.SequenceNumber)
	} else {
		p.selected[cur.SequenceNumber] = true
	}
	return ms.move(m, 1)
}
