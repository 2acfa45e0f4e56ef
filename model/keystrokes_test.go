package model

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestPrefilledInputIsReplacedByTyping: L offers 10, and typing 4 locks 4,
// not 104; backspace clears the offer; a movement key edits it instead.
func TestPrefilledInputIsReplacedByTyping(t *testing.T) {
	clock, c := fixture(t, 120)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("L")
	if v := h.m.dialog.value(0); v != "10" || !h.m.dialog.selected[0] {
		t.Fatalf("offer %q, selected %v", v, h.m.dialog.selected[0])
	}
	if s := h.screen(); !strings.Contains(s, "N  10") {
		t.Fatalf("the offer is not shown:\n%s", s)
	}
	h.typeText("4")
	h.key("enter")
	if n := len(h.m.held); n != 4 {
		t.Fatalf("L, 4, enter locked %d, want 4", n)
	}
	h.key("L")
	h.keys("backspace")
	if v := h.m.dialog.value(0); v != "" {
		t.Fatalf("backspace on the selected offer left %q", v)
	}
	h.key("esc")
	h.key("L")
	h.keys("end", "backspace")
	h.typeText("2")
	if v := h.m.dialog.value(0); v != "12" {
		t.Fatalf("end, backspace, 2 gives %q, want 12", v)
	}
	h.key("esc")
}

// TestReopenedFilterIsEdited: / shows the filter in force selected, so
// that typing replaces it rather than appending to it.
func TestReopenedFilterIsEdited(t *testing.T) {
	clock, c := fixture(t, 12)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("/")
	h.typeText("o-1")
	h.key("enter")
	if h.m.filter.Raw() != "o-1" {
		t.Fatalf("filter %q", h.m.filter.Raw())
	}
	h.key("/")
	h.typeText("o-2")
	h.key("enter")
	if h.m.filter.Raw() != "o-2" {
		t.Fatalf("the reopened filter was appended to: %q, want o-2", h.m.filter.Raw())
	}
	h.key("/")
	h.keys("end")
	h.typeText("x")
	if v := h.m.dialog.value(0); v != "o-2x" {
		t.Fatalf("editing after end: %q", v)
	}
	h.key("esc")
}

// TestBulkResultsDoNotTakeKeys: the outcome of bulk work is a notice in
// the status bar, so the key pressed right after it acts on the screen;
// the notice passes, the message log keeps it.
func TestBulkResultsDoNotTakeKeys(t *testing.T) {
	clock, c := fixture(t, 3)
	ctx := context.Background()
	got, _ := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 2})
	for _, x := range got {
		if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: x.LockToken, Reason: "r"}); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.keys("5", "s")
	h.wantStatus("resubmit 1 message(s) to orders: 1 resubmitted, 0 failed")
	h.key("1")
	if h.m.focus != 0 {
		t.Fatalf("the key after bulk work was swallowed: focus %d", h.m.focus)
	}
	h.advance(infoFor + time.Second)
	if s := h.statusLine(); strings.Contains(s, "resubmitted") {
		t.Fatalf("the notice stays: %q", s)
	}
	h.wantReport("resubmit 1 message(s) to orders: 1 resubmitted, 0 failed")
}

// TestMessageLogKeepsLongErrorsWhole: an error longer than the status bar
// is cut there, with a hint to the log, and m shows it whole.
func TestMessageLogKeepsLongErrorsWhole(t *testing.T) {
	clock, c := fixture(t, 1)
	f := newFault(c)
	h := newHarness(t, f, clock, Options{}, 60, 20)
	long := "the namespace refused the operation because the entity orders is being updated by another request; try again in a few seconds"
	f.fail("Receive", &broker.Error{Code: broker.CodeServerBusy, Message: long, TrackingID: "tid-77"})
	h.key("l")
	if s := h.statusLine(); strings.Contains(s, "a few seconds") || !strings.Contains(s, "m: all") {
		t.Fatalf("status %q: want the error cut with a hint to the log", s)
	}
	h.key("m")
	if !h.m.log.open {
		t.Fatal("m does not open the message log")
	}
	all := joined(h.screen())
	for _, want := range []string{"Message log", long, "TrackingId: tid-77"} {
		if !strings.Contains(all, want) {
			t.Fatalf("the log lacks %q:\n%s", want, h.screen())
		}
	}
	h.key("esc")
	if h.m.log.open {
		t.Fatal("esc does not close the message log")
	}
	// Refreshes failing the same way make one line that counts them.
	f.fail("Entities", &broker.Error{Code: broker.CodeServerBusy, Message: "busy"})
	h.refresh()
	h.refresh()
	if n := strings.Count(h.logText(), "busy (×2)"); n != 1 {
		t.Fatalf("repeats not counted:\n%s", h.logText())
	}
}
