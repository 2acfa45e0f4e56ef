package model

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

const (
	audit     = "events/Subscriptions/audit"
	auditDLQ  = audit + broker.DeadLetterSuffix
	auditTDLQ = audit + broker.TransferDeadLetterSuffix
)

// transferFixture gives events/Subscriptions/audit one dead-lettered
// message (sequence number 1), two that could not be forwarded to a missing
// queue (2 and 3, in its transfer dead-letter queue) and one active (4).
func transferFixture(t *testing.T) (*clockwork.FakeClock, broker.Client) {
	t.Helper()
	clock, c := fixture(t, 0)
	eng := c.(*engine.Engine)
	ctx := context.Background()
	send(t, c, "events", msg("ev-1", "AuditRecorded #1"))
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: audit, Max: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("receive: %v", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: audit, Token: got[0].LockToken,
		Reason: "Unreadable", Description: "not JSON"}); err != nil {
		t.Fatal(err)
	}
	forward := func(to string) {
		t.Helper()
		if err := eng.UpdateEntity(ctx, broker.Entity{Path: audit, Kind: broker.KindSubscription, Settings: broker.EntitySettings{ForwardTo: to}}); err != nil {
			t.Fatal(err)
		}
	}
	forward("archive") // missing: the next two land in the transfer dead-letter queue
	clock.Advance(time.Second)
	send(t, c, "events", msg("ev-2", "AuditRecorded #2"), msg("ev-3", "AuditRecorded #3"))
	forward("")
	clock.Advance(time.Second)
	send(t, c, "events", msg("ev-4", "AuditRecorded #4"))
	clock.Advance(5 * time.Second)
	return clock, c
}

func TestTransferDeadLetteredInTheDeadLetteredPane(t *testing.T) {
	clock, c := transferFixture(t)
	h := newHarness(t, c, clock, Options{Entity: audit}, 120, 40)
	h.key("5")
	screen := h.screen()
	if !strings.Contains(screen, "Dead-lettered 3") {
		t.Fatalf("no Dead-lettered 3:\n%s", screen)
	}
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.Contains(l, " ev-1 ") && (!strings.Contains(l, "Unreadable") || strings.Contains(l, "[transfer]")),
			strings.Contains(l, " ev-2 ") && !strings.Contains(l, "[transfer] M"),
			strings.Contains(l, " ev-3 ") && !strings.Contains(l, "[transfer] M"):
			t.Fatalf("row %q: only ev-2 and ev-3 carry the transfer tag", l)
		}
	}
	if strings.Count(screen, "[transfer]") != 2 {
		t.Fatalf("want two transfer tags:\n%s", screen)
	}
	// l on a transfer-dead-lettered row locks from the transfer dead-letter
	// queue; the lock is held there and c completes it there.
	h.key("j")
	h.wantCursor(2)
	h.key("l")
	h.wantStatus("locked 1 message(s) from the transfer dead-letter queue: sequence number 2")
	if h.m.held[heldKey{auditTDLQ, 2}] == nil {
		t.Fatalf("held: %v", h.m.held)
	}
	if !strings.Contains(h.screen(), "◆") {
		t.Fatalf("the held row is not marked:\n%s", h.screen())
	}
	h.key("c")
	h.wantStatus("completed: sequence number 2")
	if got := seqs(browse(t, c, auditTDLQ, broker.CategoryDeadLettered)); got != "3" {
		t.Fatalf("transfer dead-letter queue after complete: %s", got)
	}
	// s resubmits a transfer-dead-lettered message (locked by its sequence
	// number in the transfer dead-letter queue) back to the subscription.
	h.key("j")
	h.wantCursor(3)
	h.key("s")
	h.wantReport("1 resubmitted, 0 failed")
	h.key("esc")
	if got := seqs(browse(t, c, audit, broker.CategoryDeadLettered)); got != "1" {
		t.Fatalf("dead-lettered after resubmit: %s", got)
	}
	act := browse(t, c, audit, broker.CategoryActive)
	if len(act) != 2 || act[1].MessageID != "ev-3" || act[1].DeadLetterReason() != "" {
		t.Fatalf("active after resubmit: %+v", act)
	}
	if locked := browse(t, c, audit, broker.CategoryLocked); len(locked) != 0 {
		t.Fatal("locks taken on the way were not released")
	}
}

func TestTransferDeadLetteredCountsAndResubmitAll(t *testing.T) {
	clock, c := transferFixture(t)
	h := newHarness(t, c, clock, Options{Entity: audit}, 120, 40)
	e, ok := h.m.currentEntity()
	if !ok || e.Counts.DeadLettered != 1 || e.Counts.TransferDeadLettered != 2 {
		t.Fatalf("entity %+v", e)
	}
	// The entity list's X column counts both queues.
	var row string
	for _, l := range strings.Split(h.screen(), "\n") {
		if strings.Contains(l, "└ audit") {
			row = l
		}
	}
	if f := strings.Fields(row); len(f) < 7 || strings.Join(f[2:7], " ") != "1 0 0 0 3" {
		t.Fatalf("entity row %q, want A L D S X = 1 0 0 0 3", row)
	}
	h.key("5")
	h.key("S")
	if h.m.dialog == nil || h.m.dialog.kind != dlgConfirm {
		t.Fatal("S does not confirm")
	}
	text := strings.Join(h.m.dialog.text, "\n")
	if !strings.Contains(text, "Send every message of "+auditDLQ+" (1 now)") || !strings.Contains(text, "and of "+auditTDLQ+" (2 now)") {
		t.Fatalf("confirmation: %s", text)
	}
	h.key("enter")
	h.wantReport("3 resubmitted, 0 failed")
	if got := seqs(browse(t, c, audit, broker.CategoryDeadLettered)); got != "" {
		t.Fatalf("dead-lettered after S: %s", got)
	}
	if n := len(browse(t, c, audit, broker.CategoryActive)); n != 4 {
		t.Fatalf("active after S: %d", n)
	}
}

func TestTransferDeadLetteredPurgeDialog(t *testing.T) {
	clock, c := transferFixture(t)
	h := newHarness(t, c, clock, Options{Entity: audit}, 120, 40)
	h.keys("5", "j") // on sequence number 2, transfer-dead-lettered
	h.key("P")
	text := func() string { return strings.Join(h.m.dialog.text, "\n") }
	if h.m.dialog == nil || h.m.dialog.sub != broker.SubQueueTransferDeadLetter || !strings.Contains(text(), "the transfer dead-letter queue of") {
		t.Fatalf("purge dialog: %+v", h.m.dialog)
	}
	for _, want := range []string{"main queue of", "the dead-letter queue of", "the transfer dead-letter queue of"} {
		h.key("tab")
		if !strings.Contains(text(), want) {
			t.Fatalf("after tab: %s, want %q", text(), want)
		}
	}
	h.typeText(audit)
	h.key("enter")
	h.wantReport("purge " + auditTDLQ + ": 2 message(s) removed")
	if got := seqs(browse(t, c, audit, broker.CategoryDeadLettered)); got != "1" {
		t.Fatalf("dead-lettered after purge: %s", got)
	}
}

// TestGoldenTransferDeadLettered compares the Dead-lettered pane with both
// kinds of dead-lettered messages, and the detail view of a
// transfer-dead-lettered one, with testdata (go test -update rewrites them).
func TestGoldenTransferDeadLettered(t *testing.T) {
	clock, c := transferFixture(t)
	h := newHarness(t, c, clock, Options{Entity: audit}, 120, 40)
	h.key("5")
	t.Run("pane", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
	h.keys("j", "enter")
	t.Run("detail", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
}
