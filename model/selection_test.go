package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// flat is the screen's text with box edges dropped and runs of spaces made
// one, so that wrapped text can be looked for whole.
func flat(screen string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(screen, "│", " ")), " ")
}

// waitForText waits until the flat screen holds every one of wants.
func (f *flow) waitForText(wants ...string) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s := flat(f.p.text())
		ok := true
		for _, w := range wants {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("screen never showed %q:\n%s", wants, f.p.text())
}

// twelveDeadLetters dead-letters the 12 messages of orders.
func twelveDeadLetters(t *testing.T) func(broker.Client) {
	return func(c broker.Client) {
		for i := 0; i < 12; i++ {
			deadLetterOne(t, c, "ValidationFailed", fmt.Sprintf("bad order %d", i+1))
		}
	}
}

// At 60×20 the Dead-lettered pane shows fewer rows than its 12 messages:
// * still selects all 12 (issue 23: it selected the 8 on screen), x
// exports all 12, and the purge dialog states the count and what the export
// held.
func TestFlowSelectAllExportPurgeAt60x20(t *testing.T) {
	dir := t.TempDir()
	f := newFlowSized(t, Options{ExportDir: dir}, 40, 60, 20, twelveDeadLetters(t)) // 28 stay active
	f.press("5")
	f.waitFor("DLQ 12", "rows 1–")
	if n := strings.Count(f.p.text(), "ValidationFailed"); n >= 12 {
		t.Fatalf("all %d rows fit at 60×20: the test proves nothing", n)
	}
	f.press("*")
	f.waitFor("selected 12 message(s)")
	f.press("x")
	f.waitForText("exported 12 message(s) to")
	files, _ := filepath.Glob(filepath.Join(dir, "peeklock-orders-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if n := strings.Count(string(b), "\n"); n != 12 {
		t.Fatalf("the export holds %d lines, want 12", n)
	}
	f.press("esc") // clear the selection: the purge dialog then compares with the export alone
	f.press("P")
	f.waitForText("12 will be removed; the last export held 12.")
	f.press("esc")
	// Three more dead letters: the purge would remove 15, the export held 12.
	for i := 0; i < 3; i++ {
		send(t, f.eng, "orders", msg(fmt.Sprintf("late-%d", i), "late"))
		deadLetterOne(t, f.eng, "Late", "late")
	}
	f.press("P")
	f.waitForText("15 will be removed; the last export held 12.")
	f.press("esc")
	f.press("space") // one selected
	f.press("P")
	f.waitForText("15 will be removed; only 1 are selected: a purge removes them all, not the selection; the last export held 12.")
}
