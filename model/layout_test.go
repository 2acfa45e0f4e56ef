package model

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/ui"
)

// TestZoomAndSidebarKeys: z gives the focused pane the whole screen and
// back; b hides the entity list, and shows it on a screen too narrow for it
// by default.
func TestZoomAndSidebarKeys(t *testing.T) {
	clock, c := fixture(t, 30)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	rows := h.m.main.visibleRows(h.m, 0)
	h.key("z")
	l := h.m.layout()
	if !l.Zoomed || l.Sidebar.W != 0 || len(l.Panes) != 1 || l.Panes[0].Rect != (ui.Rect{X: 0, Y: 0, W: 80, H: 22}) {
		t.Fatalf("zoomed layout: %+v", l)
	}
	if got := h.m.main.visibleRows(h.m, 0); got != 20 || len(h.m.panes[0].rows) != 21 {
		t.Fatalf("zoomed: %d rows on screen, window %d; want 20 and 21", got, len(h.m.panes[0].rows))
	}
	if s := h.screen(); strings.Contains(s, "Entities") || !strings.Contains(h.statusLine(), "ZOOM") {
		t.Fatalf("zoomed screen:\n%s", s)
	}
	h.key("z")
	if h.m.layout().Zoomed || h.m.main.visibleRows(h.m, 0) != rows {
		t.Fatalf("z does not come back: %+v", h.m.layout())
	}
	h.key("b")
	if l := h.m.layout(); l.Sidebar.W != 0 || l.Main.W != 80 || strings.Contains(h.screen(), "Entities") {
		t.Fatalf("b does not hide the entity list: %+v", l)
	}
	h.key("b")
	if l := h.m.layout(); l.Sidebar.W == 0 {
		t.Fatal("b does not show the entity list again")
	}
	h.resize(50, 20)
	if h.m.layout().Sidebar.W != 24 {
		t.Fatalf("shown on purpose, the list stays at 50 columns: %+v", h.m.layout().Sidebar)
	}
	h.key("b")
	h.resize(60, 20)
	if h.m.layout().Sidebar.W != 0 {
		t.Fatal("at 60 columns the list is hidden by default")
	}
}

// TestDeadLetteredPaneGetsItsRoom: with messages dead-lettered, the
// Dead-lettered pane is on screen below the focused pane at a phone's size
// and at 120×40, where it was not before; empty panes take a title line at
// most, and none at all when the focused pane needs the room.
func TestDeadLetteredPaneGetsItsRoom(t *testing.T) {
	clock, c := fixture(t, 40)
	h := newHarness(t, c, clock, Options{}, 60, 20)
	// Nothing dead-lettered: the Active pane takes the whole height.
	if l := h.m.layout(); len(l.Panes) != 1 || h.m.main.visibleRows(h.m, 0) != 15 {
		t.Fatalf("60x20 without dead-letters: %+v", l.Panes)
	}
	deadLetterOne(t, c, "Poison", "cannot parse")
	deadLetterOne(t, c, "Poison", "cannot parse")
	h.refresh()
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		h.resize(size[0], size[1])
		s, ok := h.m.layout().Slot(4)
		if !ok || s.Rows() < 2 {
			t.Fatalf("%dx%d: the Dead-lettered pane has no room: %+v", size[0], size[1], h.m.layout().Panes)
		}
		if !strings.Contains(h.screen(), "Poison") {
			t.Fatalf("%dx%d: the reasons are not on screen:\n%s", size[0], size[1], h.screen())
		}
		for _, p := range h.m.layout().Panes {
			if p.Index != 0 && p.Index != 4 && p.Rect.H > 1 {
				t.Errorf("%dx%d: the empty pane %d takes %d lines", size[0], size[1], p.Index, p.Rect.H)
			}
		}
	}
	// A click on a pane's title focuses it.
	s, _ := h.m.layout().Slot(4)
	h.update(tea.MouseClickMsg{X: s.Rect.X + 3, Y: s.Rect.Y, Button: tea.MouseLeft})
	h.settle()
	if h.m.focus != 4 {
		t.Fatalf("click on the Dead-lettered pane: focus %d", h.m.focus)
	}
}
