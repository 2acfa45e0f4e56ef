package model

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// scheduleReversed schedules n messages in orders, each due before the one
// sent ahead of it: sequence order is the reverse of due order.
func scheduleReversed(t *testing.T, c broker.Client, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		at := t0.Add(time.Duration(n-i+1) * time.Minute)
		subject := "later"
		if i%25 == 0 {
			subject = "marked"
		}
		if _, err := c.Schedule(context.Background(), "orders", at, []*broker.Message{msg(fmt.Sprintf("s-%d", i), subject)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScheduledPaneInDueOrder: the Scheduled pane lists messages by due
// time, then sequence number, and scrolls in that order:
// down past the bottom, up back over it, to the bottom and back to the top.
func TestScheduledPaneInDueOrder(t *testing.T) {
	clock, c := fixture(t, 0)
	scheduleReversed(t, c, 30)
	// Two due at the same time: the lower sequence number first.
	at := t0.Add(90 * time.Second)
	for _, id := range []string{"tie-a", "tie-b"} {
		if _, err := c.Schedule(context.Background(), "orders", at, []*broker.Message{msg(id, "tie")}); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("4")
	rows := h.m.panes[3].rows
	if len(rows) < 5 {
		t.Fatalf("scheduled window %s", seqs(rows))
	}
	if got := seqs(rows[:5]); got != "30,31,32,29,28" {
		t.Fatalf("scheduled window starts %s, want 30,31,32,29,28 (due order)", got)
	}
	h.wantCursor(30)
	h.key("G")
	h.wantCursor(1) // due last
	h.key("g")
	h.wantCursor(30)
	n := h.m.main.visibleRows(h.m, 3)
	for i := 0; i < n; i++ {
		h.key("j")
	}
	want := rows[n].SequenceNumber // one past the screen, in due order
	h.wantCursor(want)
	for i := 0; i <= n; i++ {
		h.key("k")
	}
	h.wantCursor(30) // back up over the window in due order
	if p := h.m.panes[3]; p.top != 0 && p.top != 30 {
		t.Fatalf("top %d", p.top)
	}
}

// TestScheduledPaneDueOrderFiltered: a filtered Scheduled pane keeps due
// order across the filter's pages (one match in 25 messages: the window
// takes three pages).
func TestScheduledPaneDueOrderFiltered(t *testing.T) {
	clock, c := fixture(t, 0)
	scheduleReversed(t, c, 250)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("4")
	h.key("/")
	h.typeText("marked")
	h.key("enter")
	if got := seqs(h.m.panes[3].rows); got != "250,225,200,175,150,125,100,75,50,25" {
		t.Fatalf("filtered window %s, want 250,225,…,25 (due order)", got)
	}
}
