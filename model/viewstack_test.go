package model

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/ui"
)

// fakeView is a view kept outside the root's fields: it records what the
// stack hands it and draws a box. A modal one takes every key; one of the
// main area (named as) takes none.
type fakeView struct {
	open, modalView bool
	as              overlay
	keys            []string
	clicks, wheels  []tea.Mouse
	frames          []ui.Common // the size of every frame drawn
}

func (f *fakeView) id() overlay  { return f.as }
func (f *fakeView) isOpen() bool { return f.open }
func (f *fakeView) modal() bool  { return f.modalView }

func (f *fakeView) key(_ *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	f.keys = append(f.keys, msg.String())
	return nil, f.modalView
}

func (f *fakeView) click(_ *Model, ms tea.Mouse) (tea.Cmd, bool) {
	f.clicks = append(f.clicks, ms)
	return nil, true
}

func (f *fakeView) wheel(_ *Model, ms tea.Mouse, _ int) (tea.Cmd, bool) {
	f.wheels = append(f.wheels, ms)
	return nil, true
}

func (f *fakeView) close(*Model) { f.open = false }

func (f *fakeView) frame(_ *Model, c *ui.Common, s *ui.Screen) {
	f.frames = append(f.frames, *c)
	s.Dialog = &ui.Dialog{Title: "Fake view", Lines: []string{"drawn by the fake view"}, Width: 30}
}

// TestAddedViewGetsKeysClicksAndFrames adds a view to the stack, over the
// detail view, and checks that the loops of the root hand it the keys, the
// clicks, the wheel and the frame, and nothing reaches the views and the
// panes under it; closed, it gets nothing and the keys reach the panes
// again.
func TestAddedViewGetsKeysClicksAndFrames(t *testing.T) {
	c, clock := clientsFixture(t)
	h := newHarness(t, c, clock, Options{}, 120, 30)
	h.key("enter")
	f := &fakeView{open: true, modalView: true, as: overlay(100)}
	h.m.above = []view{f}
	if got, want := h.m.stack().ids(), []overlay{f.id(), overDetail, overMain}; !slices.Equal(got, want) {
		t.Fatalf("stack %v, want %v", got, want)
	}
	top := h.m.detail.top
	h.keys("j", "esc", "?")
	if want := []string{"j", "esc", "?"}; !slices.Equal(f.keys, want) {
		t.Fatalf("the view got the keys %q, want %q", f.keys, want)
	}
	if h.m.detail == nil || h.m.detail.top != top || h.m.help.open {
		t.Fatal("a key reached the views under the added one")
	}
	slot := h.m.layout().Panes[0].Rect
	at := tea.Mouse{X: slot.X + 2, Y: slot.Y + ui.PaneChrome + 1}
	click, wheel := at, at
	click.Button, wheel.Button = tea.MouseLeft, tea.MouseWheelDown
	h.update(tea.MouseClickMsg(click))
	h.update(tea.MouseWheelMsg(wheel))
	if len(f.clicks) != 1 || f.clicks[0] != click || len(f.wheels) != 1 || f.wheels[0] != wheel {
		t.Fatalf("clicks %v, wheels %v; want one of each at %d,%d", f.clicks, f.wheels, at.X, at.Y)
	}
	if h.m.detail == nil || h.m.detail.top != top {
		t.Fatal("the pointer reached the detail view under the added one")
	}
	f.frames = nil
	if s := h.screen(); !strings.Contains(s, "drawn by the fake view") || !strings.Contains(s, "orders › Active ›") {
		t.Fatalf("the added view is not drawn over the detail view:\n%s", s)
	}
	if len(f.frames) != 1 || f.frames[0].Width != 120 || f.frames[0].Height != 30 {
		t.Fatalf("frames %d, size %v; want one frame of 120×30", len(f.frames), f.frames)
	}

	f.open = false
	h.keys("esc", "j")
	if len(f.keys) != 3 || h.m.detail != nil || h.m.panes[0].cursor != 1 {
		t.Fatalf("closed: the view got %q, detail open %v, cursor %d; want the keys to close the detail view and move the cursor",
			f.keys, h.m.detail != nil, h.m.panes[0].cursor)
	}
	f.frames = nil
	if s := h.screen(); strings.Contains(s, "drawn by the fake view") || len(f.frames) != 0 {
		t.Fatalf("a closed view is drawn:\n%s", s)
	}
}

// TestAddedAreaViewLetsKeysThrough adds a view of the main area that takes
// no key: it covers the detail view, which gets nothing, and the keys go
// through it to the main actions, enabled as its place in the action table
// says.
func TestAddedAreaViewLetsKeysThrough(t *testing.T) {
	c, clock := clientsFixture(t)
	h := newHarness(t, c, clock, Options{}, 120, 30)
	h.key("enter")
	f := &fakeView{open: true, as: overInfo}
	h.m.above = []view{f}
	h.m.updateKeybindings() // as Update does after every message
	if got, want := h.m.stack().ids(), []overlay{overInfo, overMain}; !slices.Equal(got, want) {
		t.Fatalf("stack %v, want %v (the detail view covered)", got, want)
	}
	top := h.m.detail.top
	h.keys("j", "enter")
	if want := []string{"j", "enter"}; !slices.Equal(f.keys, want) {
		t.Fatalf("the view got the keys %q, want %q", f.keys, want)
	}
	if h.m.detail == nil || h.m.detail.top != top || h.m.panes[0].cursor != 1 {
		t.Fatalf("detail top %d (was %d), cursor %d: want j to move the pane's cursor, not the covered detail view",
			h.m.detail.top, top, h.m.panes[0].cursor)
	}
	if err := h.m.bar.err; err == nil || !strings.Contains(err.Error(), "not in the entity info view") {
		t.Fatalf("enter in the view: error %v, want the reason the detail key is disabled there", err)
	}
}
