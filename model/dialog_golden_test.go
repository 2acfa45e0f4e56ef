package model

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/peeklock/peeklock/broker"
)

// TestGoldenDialogs60x20 compares every dialog at a phone's size, 60×20,
// with testdata/TestGoldenDialogs60x20/*.golden (go test -update rewrites
// them): their text wraps, nothing of it is cut, and they fit inside the
// screen with a blank cell on each side.
func TestGoldenDialogs60x20(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"deadletter", []string{"l", "d"}},
		{"compose", []string{"n"}},
		{"edit", []string{"e"}},
		{"purge", []string{"5", "P"}},
		{"purge-main", []string{"P"}},
		{"filter", []string{"/"}},
		{"lockmany", []string{"L"}},
		{"resubmit-all", []string{"5", "S"}},
		{"cancel-scheduled", []string{"4", "delete"}},
		{"jump", []string{":"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock, c := goldenFixture(t)
			h := newHarness(t, c, clock, Options{}, 60, 20)
			h.keys(tc.keys...)
			if h.m.dialog == nil {
				t.Fatalf("%v opened no dialog", tc.keys)
			}
			s := h.screen()
			requireBlankBesideBox(t, s)
			golden.RequireEqual(t, s)
		})
	}
}

// requireBlankBesideBox fails when a cell right beside a dialog box's
// edges is not blank.
func requireBlankBesideBox(t *testing.T, screen string) {
	t.Helper()
	for i, l := range strings.Split(screen, "\n") {
		r := []rune(l)
		if ansi.StringWidth(l) != 60 {
			t.Fatalf("line %d is %d wide:\n%s", i, ansi.StringWidth(l), screen)
		}
		first, last := -1, -1
		for k, c := range r {
			if strings.ContainsRune("╭╰│", c) && first < 0 && k > 0 && (k+1 < len(r)) {
				first = k
			}
			if strings.ContainsRune("╮╯│", c) {
				last = k
			}
		}
		if first > 0 && last > first && strings.ContainsRune("╭╰", r[first]) {
			if r[first-1] != ' ' || (last+1 < len(r) && r[last+1] != ' ') {
				t.Fatalf("line %d: something shows beside the box: %q\n%s", i, l, screen)
			}
		}
	}
}

// TestGoldenHelpAndLongError60x20 compares the help screen (top and end)
// and the status bar with an error longer than a line at 60×20.
func TestGoldenHelpAndLongError60x20(t *testing.T) {
	clock, c := goldenFixture(t)
	f := newFault(c)
	h := newHarness(t, f, clock, Options{}, 60, 20)
	h.key("?")
	t.Run("help", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
	h.key("G")
	t.Run("help-end", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
	h.key("?")
	f.fail("Receive", &broker.Error{Code: broker.CodeServerBusy, Message: "the namespace is busy: try again in a few seconds", TrackingID: "tid-77"})
	h.key("l")
	t.Run("long-error", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
	if s := h.statusLine(); !strings.Contains(s, "try again in a few seconds (TrackingId: tid-77)") {
		t.Fatalf("the error is cut: %q", s)
	}
}

// TestGoldenHelpWraps compares the help screen at 80×24 and 120×40 (two
// columns) with testdata: a reason next to a disabled key wraps under its
// description instead of being cut (issue 23: cut even at 120 columns).
func TestGoldenHelpWraps(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			clock, c := goldenFixture(t)
			h := newHarness(t, c, clock, Options{ReadOnly: true}, size[0], size[1])
			h.key("?")
			if size[0] < 100 {
				h.key("pgdown") // to the Messages group, with the reasons
			}
			s := h.screen()
			if !strings.Contains(flat(s), "read-only") {
				t.Fatalf("no reason shown:\n%s", s)
			}
			for _, l := range strings.Split(s, "\n") {
				if strings.Contains(l, "…") {
					t.Fatalf("a help line is cut: %q\n%s", l, s)
				}
			}
			golden.RequireEqual(t, s)
		})
	}
}

// TestGoldenCloseClientDialog60x20 compares the connected clients view's
// close dialog (C, then X) at 60×20 with testdata.
func TestGoldenCloseClientDialog60x20(t *testing.T) {
	le, hc := clientsFixture(t)
	h := newHarness(t, le, hc, Options{}, 60, 20)
	h.keys("C", "X")
	if h.m.dialog == nil {
		t.Fatal("X opened no dialog")
	}
	s := h.screen()
	requireBlankBesideBox(t, s)
	golden.RequireEqual(t, s)
}
