package model

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// helpScreen is the help screen: every key with what it does, and why a
// disabled one is disabled, over the whole screen. It owns its state; the
// stack gives it the keys while it is open (a view, see overlay.go).
type helpScreen struct {
	open bool
	top  int
}

// show opens the help screen at its first line.
func (h *helpScreen) show() { h.open, h.top = true, 0 }

// update takes a key while the help screen is open: the help key, esc or
// q close it; the others scroll it. why returns the reason a binding is
// disabled ("" when it works).
func (h *helpScreen) update(msg tea.KeyPressMsg, c *ui.Common, why func(*key.Binding) string) tea.Cmd {
	k := c.KeyMap
	if keymap.Pressed(msg, k.Help) || keymap.Pressed(msg, k.Back) || keymap.Pressed(msg, k.Quit) {
		h.open = false
		return nil
	}
	k.Scroll(msg, &h.top, h.maxTop(c, why), max(1, c.Height-3))
	return nil
}

// maxTop is the last useful scroll position of the help screen.
func (h *helpScreen) maxTop(c *ui.Common, why func(*key.Binding) string) int {
	n := len(ui.HelpLines(c, why, c.Width))
	return max(0, n-(c.Height-2))
}

// view draws the help screen in exactly height lines of width cells.
func (h *helpScreen) view(c *ui.Common, why func(*key.Binding) string, width, height int) []string {
	return ui.HelpScreen(c, why, h.top, width, height)
}

// id names the help screen.
func (h *helpScreen) id() overlay { return overHelp }

// isOpen reports whether the help screen is open.
func (h *helpScreen) isOpen() bool { return h.open }

// modal is true: the help screen keeps every key and click.
func (h *helpScreen) modal() bool { return true }

// key scrolls or closes the help screen.
func (h *helpScreen) key(m *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	return h.update(msg, m.common(), m.reason), true
}

// click takes every click, and does nothing.
func (h *helpScreen) click(*Model, tea.Mouse) (tea.Cmd, bool) { return nil, true }

// wheel takes the wheel, and does nothing.
func (h *helpScreen) wheel(*Model, tea.Mouse, int) (tea.Cmd, bool) { return nil, true }

// close closes the help screen.
func (h *helpScreen) close(*Model) { h.open = false }

// frame draws the help screen over the whole screen down to the help line.
func (h *helpScreen) frame(m *Model, c *ui.Common, s *ui.Screen) {
	s.Cover = h.view(c, m.reason, s.Layout.Width, s.Layout.HelpLine.Y)
}
