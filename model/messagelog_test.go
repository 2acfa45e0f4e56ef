package model

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// logText returns the message log as plain text.
func (h *harness) logText() string { return stripped(strings.Join(h.m.log.lines(h.m.common()), "\n")) }

// wantReport checks that bulk work reported sub in the message log and
// left no dialog open to take the next keys.
func (h *harness) wantReport(sub string) {
	h.t.Helper()
	if h.m.dialog != nil {
		h.t.Fatalf("a dialog is open after bulk work: %q", h.m.dialog.title)
	}
	if h.m.bulk.job != nil {
		h.t.Fatalf("bulk work still running: %q", h.m.bulk.job.title)
	}
	if log := h.logText(); !strings.Contains(strings.Join(strings.Fields(log), " "), sub) {
		h.t.Fatalf("the message log lacks %q:\n%s", sub, log)
	}
}

// TestMessageLogComponent: the log keeps the last maxLogEntries lines,
// counts a line again right after itself as a repeat, opens scrolled to
// its end and closes on esc.
func TestMessageLogComponent(t *testing.T) {
	var l messageLog
	l.add(t0, false, "", "")
	for i := range maxLogEntries + 1 {
		l.add(t0, false, fmt.Sprint("line ", i), "")
	}
	l.add(t0.Add(time.Second), false, fmt.Sprint("line ", maxLogEntries), "")
	if n := len(l.entries); n != maxLogEntries || l.entries[0].Text != "line 1" {
		t.Fatalf("%d entries from %q; want %d from line 1", n, l.entries[0].Text, maxLogEntries)
	}
	if last := l.entries[maxLogEntries-1]; last.Repeat != 1 || !last.At.Equal(t0.Add(time.Second)) {
		t.Fatalf("last entry %+v; want one repeat at the second time", last)
	}
	km := keymap.DefaultKeyMap()
	c := &ui.Common{Width: 80, Height: 24, Styles: testStyles(), KeyMap: &km, Now: t0}
	l.show(c)
	if !l.open || l.top != l.maxTop(c) || l.top == 0 {
		t.Fatalf("open %v at %d; want open at the end, %d", l.open, l.top, l.maxTop(c))
	}
	if v := l.view(c, 80, 22); len(v) != 22 || !strings.Contains(stripped(strings.Join(v, "\n")), "line 1000 (×2)") {
		t.Fatalf("view of %d lines:\n%s", len(v), stripped(strings.Join(v, "\n")))
	}
	l.update(keyMsg("esc"), c)
	if l.open {
		t.Fatal("esc did not close the log")
	}
}
