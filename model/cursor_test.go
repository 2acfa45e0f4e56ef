package model

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// cursorRow returns the line of the screen with the cursor mark.
func (h *harness) cursorRow() string {
	for _, l := range strings.Split(h.screen(), "\n") {
		if strings.Contains(l, "▸") {
			return l
		}
	}
	return ""
}

// Locks above the cursor expire between two frames: their rows leave the
// Locked pane and flash in place for a moment. The cursor stays drawn on
// its own message (it was drawn at its old index, on another row), and c
// completes that message.
func TestCursorFollowsItsMessageWhenRowsAboveVanish(t *testing.T) {
	clock, c := fixture(t, 6)
	// Another receiver locks 1 and 2; 20 s later this dashboard locks 3–5.
	if _, err := c.Receive(context.Background(), broker.ReceiveRequest{Entity: "orders", Max: 2}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, c, clock, Options{LockCount: 3}, 100, 30)
	h.advance(20 * time.Second)
	h.key("l")
	h.wantCursor(3)
	h.keys("j", "j")
	h.wantCursor(5)
	h.advance(10*time.Second + 200*time.Millisecond) // 1 and 2 expire
	if got := seqs(h.m.panes[1].rows); got != "3,4,5" {
		t.Fatalf("locked rows %s, want 3,4,5", got)
	}
	if !strings.Contains(h.screen(), "EXPIRED") {
		t.Fatalf("the expired locks do not flash:\n%s", h.screen())
	}
	h.wantCursor(5)
	if row := h.cursorRow(); !regexp.MustCompile(`▸\S*\s+5\s`).MatchString(row) {
		t.Fatalf("the cursor is drawn on %q, want sequence number 5:\n%s", row, h.screen())
	}
	h.key("c")
	h.wantStatus("completed: sequence number 5")
	if got := seqs(browse(t, c, "orders", broker.CategoryLocked)); got != "3,4" {
		t.Fatalf("locked after c: %s, want 3,4", got)
	}
}

// The message under the cursor goes (with one above it) between two
// frames: the cursor stops on the next one, and a settle key pressed right
// then acts on nothing, saying why; once the moment has passed it acts on
// the row now under the cursor.
func TestSettleKeyWaitsWhenTheRowUnderTheCursorChangedByItself(t *testing.T) {
	clock, c := fixture(t, 6)
	h := newHarness(t, c, clock, Options{LockCount: 5}, 100, 30)
	h.key("l")
	h.keys("j", "j", "j")
	h.wantCursor(4)
	// Settled behind the dashboard's back (as another dashboard could).
	for _, seq := range []int64{1, 4} {
		tok := h.m.held[heldKey{"orders", seq}].msg.LockToken
		if err := c.Settle(context.Background(), broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: tok}); err != nil {
			t.Fatal(err)
		}
	}
	h.refresh()
	h.wantCursor(5)
	for _, k := range []string{"c", "a", "d", "f", "r"} {
		h.key(k)
		h.wantErr("the row under the cursor changed by itself just now (sequence number 4 is gone, the cursor is on 5 now)")
		if h.m.dialog != nil {
			t.Fatalf("%s opened %q", k, h.m.dialog.title)
		}
	}
	h.wantStatus("the row under the cursor changed by itself")
	if got := seqs(browse(t, c, "orders", broker.CategoryLocked)); got != "2,3,5" {
		t.Fatalf("locked: %s, want 2,3,5 (nothing settled)", got)
	}
	h.advance(settleGuard)
	h.key("c")
	h.wantStatus("completed: sequence number 5")
	if got := seqs(browse(t, c, "orders", broker.CategoryLocked)); got != "2,3" {
		t.Fatalf("locked: %s, want 2,3", got)
	}
	// Moving the cursor is choosing: no wait after it.
	tok := h.m.held[heldKey{"orders", 3}].msg.LockToken
	if err := c.Settle(context.Background(), broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: tok}); err != nil {
		t.Fatal(err)
	}
	h.refresh()
	h.keys("k", "j")
	h.key("c")
	if got := seqs(browse(t, c, "orders", broker.CategoryLocked)); got == "2" || got == "2,3" {
		t.Fatalf("locked: %s", got)
	}
}

// Rows appear above the cursor until its message would be pushed below the
// pane: the window scrolls with it and the cursor stays on it.
func TestCursorStaysOnItsMessageWhenRowsAppearAbove(t *testing.T) {
	clock, c := fixture(t, 40)
	ctx := context.Background()
	held, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 40})
	if err != nil || len(held) != 40 {
		t.Fatalf("receive: %d %v", len(held), err)
	}
	// Dead letters keep their sequence numbers.
	deadLetter := func(seq int64) {
		t.Helper()
		if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: held[seq-1].LockToken, Reason: "R"}); err != nil {
			t.Fatal(err)
		}
	}
	deadLetter(20)
	deadLetter(30)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("5")
	h.key("j")
	h.wantCursor(30)
	for seq := int64(1); seq <= int64(h.m.main.visibleRows(h.m, 4))+2; seq++ {
		deadLetter(seq)
	}
	h.refresh()
	h.refresh()
	h.wantCursor(30)
	if row := h.cursorRow(); !regexp.MustCompile(`▸\S*\s+30\s`).MatchString(row) {
		t.Fatalf("the cursor is drawn on %q, want 30:\n%s", row, h.screen())
	}
}

// l puts the cursor on the lock it took even when that row lies below the
// rows the Locked pane shows (it was put on the last row shown, another
// receiver's lock, and d or c then acted on that one).
func TestLockPutsTheCursorOnItsRowBelowTheScreen(t *testing.T) {
	clock, c := fixture(t, 30)
	if _, err := c.Receive(context.Background(), broker.ReceiveRequest{Entity: "orders", Max: 20}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, c, clock, Options{}, 60, 20)
	h.key("l")
	h.wantCursor(21)
	if row := h.cursorRow(); !regexp.MustCompile(`▸\S*\s+21\s`).MatchString(row) {
		t.Fatalf("the cursor is drawn on %q, want 21:\n%s", row, h.screen())
	}
	h.key("c")
	h.wantStatus("completed: sequence number 21")
}
