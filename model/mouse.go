package model

import (
	tea "charm.land/bubbletea/v2"
)

// onClick hands a left click down the stack, to the first view that takes
// it: a modal view takes every click, a view of the main area the ones in
// it, and the main screen selects what was clicked (an entity, a tab, a
// pane row).
func (m *Model) onClick(ms tea.Mouse) tea.Cmd {
	if ms.Button != tea.MouseLeft {
		return nil
	}
	for _, v := range m.stack() {
		if cmd, taken := v.click(m, ms); taken {
			return cmd
		}
	}
	return nil
}

// onWheel hands a turn of the mouse wheel, three rows, down the stack to
// the first view that takes it: the view on top scrolls (a dialog and the
// help screen ignore it), the main screen moves the cursor of the pane
// under the pointer.
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
	for _, v := range m.stack() {
		if cmd, taken := v.wheel(m, ms, d); taken {
			return cmd
		}
	}
	return nil
}
