package model

import (
	"strings"
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
	if h.m.job != nil {
		h.t.Fatalf("bulk work still running: %q", h.m.job.title)
	}
	if log := h.logText(); !strings.Contains(strings.Join(strings.Fields(log), " "), sub) {
		h.t.Fatalf("the message log lacks %q:\n%s", sub, log)
	}
}
