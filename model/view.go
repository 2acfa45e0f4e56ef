package model

import (
	tea "charm.land/bubbletea/v2"
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

// render builds the screen as a string (the tests compare it): each view
// of the stack draws its part, from the main screen up, so the view on top
// is drawn last.
func (m *Model) render() string {
	c := m.common()
	s := ui.Screen{Layout: m.layout()}
	st := m.stack()
	for i := len(st) - 1; i >= 0; i-- {
		st[i].frame(m, c, &s)
	}
	return ui.Render(c, s)
}
