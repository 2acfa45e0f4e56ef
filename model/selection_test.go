package model

import (
	"context"
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

// x and y with nothing selected act on the whole pane, every page, and say
// so; with a selection, on all of it, also off screen; selected messages
// found gone leave the selection, and the notice says how many.
func TestExportAndCopyWholePaneAndSelection(t *testing.T) {
	clock, c := fixture(t, 30)
	dir := t.TempDir()
	h := newHarness(t, c, clock, Options{ExportDir: dir}, 60, 20)
	if n := h.m.main.visibleRows(h.m, 0); n >= 30 {
		t.Fatalf("%d rows on screen: the test proves nothing", n)
	}
	h.key("x")
	h.wantStatus("exported 30 message(s), the whole Active pane: nothing was selected, to")
	h.wantReport("nothing was selected, to")
	h.key("y")
	if len(h.clip) != 1 || strings.Count(h.clip[0], `"MessageId"`) != 30 {
		t.Fatalf("y copied %d messages, want 30", strings.Count(strings.Join(h.clip, ""), `"MessageId"`))
	}
	h.key("*")
	h.wantStatus("selected 30 message(s): every message of the Active pane")
	// Five selected messages go off screen (received and completed).
	got, err := c.Receive(context.Background(), broker.ReceiveRequest{Entity: "orders", Max: 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range got[25:] {
		if err := c.Settle(context.Background(), broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: x.LockToken}); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range got[:25] {
		if err := c.Settle(context.Background(), broker.Settlement{Kind: broker.Abandon, Entity: "orders", Token: x.LockToken}); err != nil {
			t.Fatal(err)
		}
	}
	h.advance(time.Second) // a new file name
	h.refresh()
	h.key("x")
	h.wantReport("exported 25 message(s), 5 selected message(s) are gone and left the selection, to")
	if n := len(h.m.panes[0].selected); n != 25 {
		t.Fatalf("%d selected, want 25", n)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("files %v", files)
	}
	h.key("*")
	h.wantStatus("selection cleared (25 unselected)")
}

// * honours the filter; a selected message that a window shows gone
// leaves the selection; * while other bulk work runs is refused and leaves
// that work alone.
func TestSelectAllFilterAndGone(t *testing.T) {
	clock, c := fixture(t, 0)
	sendTenantOrders(t, c)
	h := newHarness(t, c, clock, Options{}, 60, 20)
	h.key("/")
	h.typeText("tenant=acme")
	h.key("enter")
	h.key("*")
	h.wantStatus("selected 15 message(s): every message of the Active pane that matches the filter")
	// Sequence number 2 (acme, on screen) goes.
	got, err := c.Receive(context.Background(), broker.ReceiveRequest{Entity: "orders", Max: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(context.Background(), broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: got[1].LockToken}); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(context.Background(), broker.Settlement{Kind: broker.Abandon, Entity: "orders", Token: got[0].LockToken}); err != nil {
		t.Fatal(err)
	}
	h.refresh()
	if n := len(h.m.panes[0].selected); n != 14 || h.m.panes[0].selected[2] {
		t.Fatalf("%d selected (2: %v), want 14 without 2", n, h.m.panes[0].selected[2])
	}
}
