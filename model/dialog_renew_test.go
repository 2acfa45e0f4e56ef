package model

import (
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
)

// On a 10 s lock (the demo's), the dead-letter dialog keeps the lock while
// the reason is typed, and says so: dead-lettering after 25 s works
// (issue 23 item 10: the lock expired under the dialog).
func TestDeadLetterDialogRenewsItsLock(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	eng := newEngine(t, clock, broker.Entity{Path: "orders", Settings: broker.EntitySettings{LockDuration: 10 * time.Second}})
	send(t, eng, "orders", msg("o-1", "order 1"))
	h := newHarness(t, eng, clock, Options{}, 60, 20)
	h.keys("l", "d")
	if h.m.dialog == nil {
		t.Fatal("d opened no dialog")
	}
	if s := flat(h.screen()); !strings.Contains(s, "Its lock is renewed while this dialog is open (10s left).") {
		t.Fatalf("the dialog does not say its lock is renewed:\n%s", h.screen())
	}
	h.typeText("Poi")
	h.advance(25 * time.Second)
	h.typeText("son")
	if s := flat(h.screen()); !strings.Contains(s, "Its lock is renewed while this dialog is open") || strings.Contains(s, "is gone") {
		t.Fatalf("after 25 s:\n%s", h.screen())
	}
	h.keys("enter", "enter")
	h.wantStatus("dead-lettered: sequence number 1")
	dlq := browse(t, eng, "orders", broker.CategoryDeadLettered)
	if len(dlq) != 1 || dlq[0].DeadLetterReason() != "Poison" || dlq[0].DeliveryCount != 1 {
		t.Fatalf("dead-lettered: %+v", dlq)
	}
	// Closed, the dialog no longer keeps the lock: the next one expires.
	send(t, eng, "orders", msg("o-2", "order 2"))
	h.keys("l", "d", "esc")
	h.advance(11 * time.Second)
	if len(h.m.held) != 0 {
		t.Fatalf("a lock is still held after its dialog closed: %v", h.m.held)
	}
}

// Editing a copy of a message this dashboard holds keeps its lock too.
func TestEditDialogRenewsTheOriginalsLock(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	eng := newEngine(t, clock, broker.Entity{Path: "orders", Settings: broker.EntitySettings{LockDuration: 10 * time.Second}})
	send(t, eng, "orders", msg("o-1", "order 1"))
	h := newHarness(t, eng, clock, Options{}, 60, 20)
	h.keys("l", "e")
	if h.m.dialog == nil || !strings.Contains(flat(h.screen()), "Its lock is renewed while this dialog is open") {
		t.Fatalf("the edit dialog does not keep the lock:\n%s", h.screen())
	}
	h.advance(25 * time.Second)
	h.key("esc")
	h.key("c")
	h.wantStatus("completed: sequence number 1")
}
