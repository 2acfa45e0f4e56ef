package model

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/ui"
)

// TestOverlayStackOrder pins the order of the stack: a dialog over the
// message log over help over the view of the main area (the connected
// clients over the entity info over the detail view, the topmost covering
// the others) over the panes.
func TestOverlayStackOrder(t *testing.T) {
	m := &Model{}
	if got := m.stack(); !slices.Equal(got.ids(), []overlay{overMain}) || got.top() != overMain || got.area() != overMain {
		t.Fatalf("nothing open: stack %v, top %v, area %v", got.ids(), got.top(), got.area())
	}
	m.detail, m.entInfo, m.clients = &detailState{}, &infoState{}, &clientsState{}
	m.help.open, m.log.open, m.dialog = true, true, &dialogState{}
	want := []overlay{overDialog, overLog, overHelp, overClients, overMain}
	if got := m.stack(); !slices.Equal(got.ids(), want) {
		t.Fatalf("stack %v, want %v", got.ids(), want)
	}
	if s := m.stack(); s.top() != overDialog || s.area() != overClients {
		t.Fatalf("top %v, area %v; want dialog, clients", s.top(), s.area())
	}
	m.dialog, m.log.open, m.clients = nil, false, nil
	if s := m.stack(); s.top() != overHelp || s.area() != overInfo {
		t.Fatalf("top %v, area %v; want help, info", s.top(), s.area())
	}
	m.help.open, m.entInfo = false, nil
	if got, want := m.stack().ids(), []overlay{overDetail, overMain}; !slices.Equal(got, want) {
		t.Fatalf("stack %v, want %v", got, want)
	}
}

// TestOverlayTakesKeysAndIsDrawn opens views over each other with their
// keys and checks, for each pair, that the one on top is drawn and takes
// the keys (esc closes it and only it), and that the wheel and clicks do
// not reach the panes under a view.
func TestOverlayTakesKeysAndIsDrawn(t *testing.T) {
	cases := []struct {
		name  string
		keys  []string
		top   overlay
		shows string // on the screen while open
		after overlay
	}{
		{"detail", []string{"enter"}, overDetail, "orders › Active ›", overMain},
		{"clients", []string{"C"}, overClients, "connected clients", overMain},
		{"info over detail", []string{"enter", "i"}, overInfo, "orders › info", overDetail},
		{"clients over detail", []string{"enter", "C"}, overClients, "connected clients", overDetail},
		{"help over detail", []string{"enter", "?"}, overHelp, "resubmit whole DLQ", overDetail},
		{"log over info", []string{"i", "m"}, overLog, "Message log", overInfo},
		{"dialog over detail", []string{"enter", ":"}, overDialog, "Jump to an entity", overDetail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, clock := clientsFixture(t)
			h := newHarness(t, c, clock, Options{}, 120, 30)
			h.keys(tc.keys...)
			if got := h.m.stack().top(); got != tc.top {
				t.Fatalf("top is %v, want %v (stack %v)", got, tc.top, h.m.stack().ids())
			}
			if s := h.screen(); !strings.Contains(s, tc.shows) {
				t.Fatalf("%v on top, but %q is not on screen:\n%s", tc.top, tc.shows, s)
			}
			focus, cursor := h.m.focus, h.m.panes[h.m.focus].cursor
			l := h.m.layout()
			slot := l.Panes[0].Rect // the focused pane, cursor on its first row
			h.update(tea.MouseWheelMsg{X: slot.X + 2, Y: slot.Y + ui.PaneChrome + 1, Button: tea.MouseWheelDown})
			h.update(tea.MouseClickMsg{X: slot.X + 2, Y: slot.Y + ui.PaneChrome + 1, Button: tea.MouseLeft})
			if h.m.focus != focus || h.m.panes[h.m.focus].cursor != cursor {
				t.Fatalf("the pointer reached the panes under %v", tc.top)
			}
			if tc.top == overDialog {
				h.key("j") // typed into the dialog, not a scroll of the detail
				if h.m.dialog == nil || !strings.Contains(h.m.dialog.value(0), "j") {
					t.Fatalf("the dialog did not take the key")
				}
			}
			h.key("esc")
			if got := h.m.stack().top(); got != tc.after {
				t.Fatalf("after esc, top is %v, want %v (stack %v)", got, tc.after, h.m.stack().ids())
			}
		})
	}
}

// TestTabClickLeavesEveryAreaView: a click on a pane's tab closes the
// views of the main area, the connected clients view included, and
// focuses the pane.
func TestTabClickLeavesEveryAreaView(t *testing.T) {
	c, clock := clientsFixture(t)
	h := newHarness(t, c, clock, Options{}, 120, 30)
	h.keys("enter", "C")
	l := h.m.layout()
	e, _ := h.m.currentEntity()
	x := -1
	for i := 0; i < l.Tabs.W && x < 0; i++ {
		if ui.TabAt(e.Counts, l.Tabs.W, i) == 1 {
			x = l.Tabs.X + i
		}
	}
	if x < 0 {
		t.Fatal("no tab of the Locked pane on screen")
	}
	h.update(tea.MouseClickMsg{X: x, Y: l.Tabs.Y, Button: tea.MouseLeft})
	if got := h.m.stack().top(); got != overMain || h.m.focus != 1 {
		t.Fatalf("after a click on the Locked tab: top %v, focus %d; want main, 1", got, h.m.focus)
	}
}
