package model

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// fixture is an engine with the usual entities and n messages in orders.
func fixture(t testing.TB, n int) (*clockwork.FakeClock, broker.Client) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(t0)
	eng := newEngine(t, clock,
		broker.Entity{Path: "orders", Settings: broker.EntitySettings{LockDuration: 30 * time.Second, MaxDeliveryCount: 3}},
		broker.Entity{Path: "payments"},
		broker.Entity{Path: "events", Kind: broker.KindTopic},
		broker.Entity{Path: "events/Subscriptions/audit", Kind: broker.KindSubscription},
	)
	for i := 1; i <= n; i++ {
		send(t, eng, "orders", msg(fmt.Sprintf("o-%d", i), fmt.Sprintf("order %d", i)))
	}
	return clock, eng
}

// browse returns every message of a category (tests only).
func browse(t testing.TB, c broker.Client, entity string, cat broker.Category) []*broker.Message {
	t.Helper()
	msgs, err := c.Browse(context.Background(), broker.BrowseRequest{Entity: entity, Category: cat, Max: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func seqs(msgs []*broker.Message) string {
	var s []string
	for _, x := range msgs {
		s = append(s, fmt.Sprint(x.SequenceNumber))
	}
	return strings.Join(s, ",")
}

func (h *harness) cursorSeq() int64 {
	if cur := h.m.focused().current(); cur != nil {
		return cur.SequenceNumber
	}
	return -1
}

func (h *harness) wantCursor(seq int64) {
	h.t.Helper()
	if got := h.cursorSeq(); got != seq {
		h.t.Fatalf("cursor on sequence number %d, want %d", got, seq)
	}
}

func (h *harness) wantStatus(sub string) {
	h.t.Helper()
	if s := h.statusLine(); !strings.Contains(s, sub) {
		h.t.Fatalf("status %q does not contain %q", s, sub)
	}
}

func (h *harness) wantErr(sub string) {
	h.t.Helper()
	if h.m.bar.err == nil || !strings.Contains(h.m.bar.err.Error(), sub) {
		h.t.Fatalf("last error %v does not contain %q", h.m.bar.err, sub)
	}
}

func TestFirstRefreshShowsEntitiesAndActivePane(t *testing.T) {
	clock, c := fixture(t, 3)
	h := newHarness(t, c, clock, Options{}, 120, 40)
	if h.m.entity != "orders" || h.m.bar.conn != ui.ConnConnected {
		t.Fatalf("entity %q conn %q", h.m.entity, h.m.bar.conn)
	}
	if got := seqs(h.m.panes[0].rows); got != "1,2,3" {
		t.Fatalf("active window %s", got)
	}
	s := h.screen()
	for _, want := range []string{"orders", "payments", " └ audit", "o-1", "order 3", "1 Active 3"} {
		if !strings.Contains(s, want) {
			t.Fatalf("%q missing:\n%s", want, s)
		}
	}
}

func TestMoveAndScroll(t *testing.T) {
	clock, c := fixture(t, 50) // 80x24: 19 rows on screen
	h := newHarness(t, c, clock, Options{}, 80, 24)
	if n := h.m.main.visibleRows(h.m, 0); n != 19 {
		t.Fatalf("rows %d", n)
	}
	if len(h.m.panes[0].rows) != 20 {
		t.Fatalf("the window is the screen plus one, got %d", len(h.m.panes[0].rows))
	}
	h.keys("j", "down")
	h.wantCursor(3)
	h.key("k")
	h.wantCursor(2)
	h.key("k")
	h.key("k") // at the top of the queue: stays
	h.wantCursor(1)
	h.key("G")
	h.wantCursor(50)
	if p := h.m.panes[0]; p.top != 32 || p.pos != 32 {
		t.Fatalf("after G: top %d pos %d", p.top, p.pos)
	}
	h.key("g")
	h.wantCursor(1)
	h.key("pgdown")
	h.wantCursor(20)
	h.key("pgdown")
	h.wantCursor(39)
	h.key("pgup")
	h.wantCursor(20)
	h.key("home")
	h.wantCursor(1)
	for i := 0; i < 19; i++ {
		h.key("j")
	}
	h.wantCursor(20) // scrolled by one past the bottom
	if p := h.m.panes[0]; p.top != 2 || p.cursor != 18 {
		t.Fatalf("top %d cursor %d", p.top, p.cursor)
	}
	for i := 0; i < 20; i++ {
		h.key("k")
	}
	h.wantCursor(1) // scrolled back up by bisection
	if h.m.panes[0].top != 0 && h.m.panes[0].top != 1 {
		t.Fatalf("top %d", h.m.panes[0].top)
	}
}

func TestPaneKeys(t *testing.T) {
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	for i, k := range []string{"2", "3", "4", "5", "1"} {
		want := (i + 1) % numPanes
		h.key(k)
		if h.m.focus != want {
			t.Fatalf("key %s: focus %d, want %d", k, h.m.focus, want)
		}
	}
	h.key("tab")
	h.key("tab")
	if h.m.focus != 2 {
		t.Fatalf("tab: %d", h.m.focus)
	}
	h.keys("shift+tab", "shift+tab", "shift+tab")
	if h.m.focus != 4 {
		t.Fatalf("shift+tab wraps: %d", h.m.focus)
	}
}

// TestEntityKeysVisitTopics: ] and [ step through every entity; a topic,
// which holds no messages itself, opens its information view with its
// subscriptions.
func TestEntityKeysVisitTopics(t *testing.T) {
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	var got []string
	for i := 0; i < 4; i++ {
		h.key("]")
		got = append(got, h.m.entity)
		if h.m.entity == "events" {
			if h.m.entInfo == nil || !strings.Contains(h.screen(), "events › info") {
				t.Fatalf("the topic's information view is not open:\n%s", h.screen())
			}
			h.key("esc")
			if s := h.screen(); !strings.Contains(s, "a topic holds no messages") {
				t.Fatalf("the topic's panes do not say why they are empty:\n%s", s)
			}
			h.key("l")
			h.wantErr("a topic holds no messages")
		}
	}
	if strings.Join(got, " ") != "payments events events/Subscriptions/audit orders" { // the engine lists by path
		t.Fatalf("] visits %v", got)
	}
	h.key("[")
	if h.m.entity != "events/Subscriptions/audit" {
		t.Fatalf("[ went to %s", h.m.entity)
	}
}

func TestDetailOpensAndCloses(t *testing.T) {
	clock, c := fixture(t, 2)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("j")
	h.key("enter")
	if h.m.detail == nil || h.m.detail.msg.MessageID != "o-2" {
		t.Fatal("detail not open on o-2")
	}
	s := h.screen()
	for _, want := range []string{"orders › Active › 2", "MessageId" + strings.Repeat(" ", 16) + "o-2"} {
		if !strings.Contains(s, want) {
			t.Fatalf("%q missing:\n%s", want, s)
		}
	}
	h.keys("down", "pgdown", "G")
	for _, want := range []string{"── Body (data, json, 12 bytes)", `"id": "o-2"`} {
		if s := h.screen(); !strings.Contains(s, want) {
			t.Fatalf("%q missing:\n%s", want, s)
		}
	}
	if h.m.detail.top == 0 {
		t.Fatal("detail does not scroll")
	}
	h.key("g")
	if h.m.detail.top != 0 {
		t.Fatal("g goes to the top of the detail")
	}
	h.key("2") // pane keys do not work in the detail view
	h.wantErr("not in the detail view")
	h.key("esc")
	if h.m.detail != nil {
		t.Fatal("esc does not close the detail")
	}
}

func TestLockCompleteAbandonDeferDeadLetter(t *testing.T) {
	clock, c := fixture(t, 4)
	h := newHarness(t, c, clock, Options{}, 120, 40)

	h.key("l")
	if h.m.focus != 1 || len(h.m.held) != 1 {
		t.Fatalf("after l: focus %d held %d", h.m.focus, len(h.m.held))
	}
	h.wantStatus("locked 1 message(s): sequence number 1")
	h.wantCursor(1)
	h.key("c")
	h.wantStatus("completed: sequence number 1")
	if len(h.m.held) != 0 || seqs(browse(t, c, "orders", broker.CategoryActive)) != "2,3,4" {
		t.Fatal("complete did not remove the message")
	}

	h.key("1")
	h.key("l")
	h.key("a")
	h.wantStatus("abandoned: sequence number 2")
	if act := browse(t, c, "orders", broker.CategoryActive); act[0].SequenceNumber != 2 || act[0].DeliveryCount != 2 {
		t.Fatalf("abandon: %s dc %d", seqs(act), act[0].DeliveryCount)
	}

	h.key("1")
	h.key("l")
	h.key("f")
	h.wantStatus("deferred: sequence number 2")
	if got := seqs(browse(t, c, "orders", broker.CategoryDeferred)); got != "2" {
		t.Fatalf("deferred %s", got)
	}

	// l on the Deferred pane locks the selected deferred message by number.
	h.key("3")
	h.wantCursor(2)
	h.key("l")
	if h.m.held[heldKey{"orders", 2}] == nil {
		t.Fatal("deferred message not locked")
	}
	h.key("d")
	if h.m.dialog == nil || h.m.dialog.kind != dlgDeadLetter {
		t.Fatal("d does not ask for a reason")
	}
	h.key("enter") // to Description
	h.key("enter") // submit without reason
	if h.m.dialog == nil || !strings.Contains(h.m.dialog.err, "a reason is required") {
		t.Fatal("an empty reason is accepted")
	}
	h.key("shift+tab")
	h.typeText("BadOrder")
	h.key("tab")
	h.typeText("no such item")
	h.key("enter")
	if h.m.dialog != nil {
		t.Fatalf("dialog still open: %s", h.m.dialog.err)
	}
	dlq := browse(t, c, "orders", broker.CategoryDeadLettered)
	if len(dlq) != 1 || dlq[0].DeadLetterReason() != "BadOrder" || dlq[0].DeadLetterErrorDescription() != "no such item" {
		t.Fatalf("dead-letter: %+v", dlq)
	}
	h.key("5")
	if s := h.screen(); !strings.Contains(s, "BadOrder") || !strings.Contains(s, "no such item") {
		t.Fatalf("DLQ pane lacks reason and description:\n%s", s)
	}
}

func TestSettleKeysExplainWhenNothingIsHeld(t *testing.T) {
	clock, c := fixture(t, 2)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("c")
	h.wantErr("complete: sequence number 1 is not locked by this dashboard: press l")
	h.key("3")
	h.key("c")
	h.wantErr("no message here")
	// A lock held by another receiver cannot be settled from here.
	if _, err := c.Receive(context.Background(), broker.ReceiveRequest{Entity: "orders", Max: 1}); err != nil {
		t.Fatal(err)
	}
	h.refresh()
	h.key("2")
	h.key("a")
	h.wantErr("locked by another receiver")
	h.key("5")
	h.key("s")
	h.wantErr("no message here")
	h.key("1")
	h.key("s")
	h.wantErr("works on the Dead-lettered pane")
}

func TestRenewAndAutoRenew(t *testing.T) {
	clock, c := fixture(t, 2)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("l")
	k := heldKey{"orders", 1}
	first := h.m.held[k].msg.LockedUntil
	if !first.Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("locked until %s", first)
	}
	h.advance(10 * time.Second)
	h.key("r")
	if got := h.m.held[k].msg.LockedUntil; !got.Equal(t0.Add(40 * time.Second)) {
		t.Fatalf("renewed until %s", got)
	}
	h.wantStatus("renewed lock on sequence number 1")
	h.key("R")
	if !h.m.held[k].autoRenew {
		t.Fatal("R does not turn auto-renew on")
	}
	h.advance(90 * time.Second) // three lock durations
	hl := h.m.held[k]
	if hl == nil || !hl.msg.LockedUntil.After(clock.Now()) {
		t.Fatal("auto-renew let the lock expire")
	}
	if locked := browse(t, c, "orders", broker.CategoryLocked); seqs(locked) != "1" {
		t.Fatalf("engine locks: %s", seqs(locked))
	}
	h.key("R")
	if h.m.held[k].autoRenew {
		t.Fatal("R does not turn auto-renew off")
	}
}

func TestLockExpiryFlashesAndRedelivers(t *testing.T) {
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("l")
	h.advance(29 * time.Second)
	if h.m.held[heldKey{"orders", 1}] == nil {
		t.Fatal("lock gone early")
	}
	h.advance(1500 * time.Millisecond)
	if len(h.m.held) != 0 || len(h.m.ghosts) != 1 || h.m.ghosts[0].kind != ui.FlashExpired {
		t.Fatalf("held %d ghosts %+v", len(h.m.held), h.m.ghosts)
	}
	if s := h.screen(); !strings.Contains(s, "EXPIRED") {
		t.Fatalf("no flash:\n%s", s)
	}
	act := browse(t, c, "orders", broker.CategoryActive)
	if len(act) != 1 || act[0].DeliveryCount != 2 {
		t.Fatalf("not redelivered: %+v", act)
	}
	h.advance(FlashFor)
	if len(h.m.ghosts) != 0 {
		t.Fatal("the flash does not end")
	}
}

func TestResubmitFromDeadLetterQueue(t *testing.T) {
	clock, c := fixture(t, 3)
	ctx := context.Background()
	// Dead-letter all three from outside the dashboard.
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range got {
		if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: x.LockToken, Reason: "r"}); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("5")
	h.key("j") // sequence number 2: not at the head, so the job locks 1 on the way
	h.key("s")
	h.wantReport("1 resubmitted, 0 failed")
	if got := seqs(browse(t, c, "orders", broker.CategoryDeadLettered)); got != "1,3" {
		t.Fatalf("DLQ after resubmit: %s", got)
	}
	act := browse(t, c, "orders", broker.CategoryActive)
	if len(act) != 1 || act[0].MessageID != "o-2" || act[0].DeadLetterReason() != "" {
		t.Fatalf("resubmitted copy: %+v", act)
	}
	if locked := browse(t, c, "orders", broker.CategoryLocked); len(locked) != 0 {
		t.Fatal("locks taken on the way were not released")
	}
	h.key("esc")
	// S resubmits the rest after a confirmation.
	h.key("S")
	if h.m.dialog == nil || h.m.dialog.kind != dlgConfirm {
		t.Fatal("S does not confirm")
	}
	h.key("enter")
	if got := seqs(browse(t, c, "orders", broker.CategoryDeadLettered)); got != "" {
		t.Fatalf("DLQ after S: %s", got)
	}
	if n := len(browse(t, c, "orders", broker.CategoryActive)); n != 3 {
		t.Fatalf("active after S: %d", n)
	}
	h.wantReport("2 resubmitted, 0 failed")
}

func TestComposeSendAndSchedule(t *testing.T) {
	clock, c := fixture(t, 0)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("n")
	d := h.m.dialog
	if d == nil || d.kind != dlgCompose || d.value(fTo) != "orders" {
		t.Fatal("n does not open compose for orders")
	}
	h.key("tab")
	h.typeText("text/plain")
	h.keys("tab")
	h.typeText("m-1")
	h.keys("tab", "tab") // SessionId stays empty
	h.typeText("hello")
	h.keys("tab", "tab", "tab")
	h.typeText("tenant=acme; n=5")
	h.key("tab")
	h.typeText("10m")
	h.keys("tab", "tab")
	h.typeText("the body")
	h.key("ctrl+s")
	if h.m.dialog != nil {
		t.Fatalf("compose still open: %s", h.m.dialog.err)
	}
	h.wantStatus("sent to orders")
	act := browse(t, c, "orders", broker.CategoryActive)
	if len(act) != 1 {
		t.Fatalf("%d messages", len(act))
	}
	x := act[0]
	if x.MessageID != "m-1" || x.ContentType != "text/plain" || x.Subject != "hello" || string(x.Body) != "the body" ||
		x.ApplicationProperties["tenant"] != "acme" || x.ApplicationProperties["n"] != "5" || x.TimeToLive != 10*time.Minute {
		t.Fatalf("sent %+v", x)
	}

	// Schedule, and a bad schedule that stays in the dialog.
	h.key("n")
	for i := 0; i < fSchedule; i++ {
		h.key("tab")
	}
	h.typeText("soon")
	h.key("ctrl+s")
	if h.m.dialog == nil || !strings.Contains(h.m.dialog.err, `schedule "soon" is neither`) {
		t.Fatal("a bad schedule is accepted")
	}
	for range "soon" {
		h.key("backspace")
	}
	h.typeText("+30s")
	h.key("ctrl+s")
	if sch := browse(t, c, "orders", broker.CategoryScheduled); len(sch) != 1 || !sch[0].ScheduledEnqueueTime.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("scheduled: %+v", sch)
	}
	h.wantStatus("scheduled in orders as sequence number 2")
	// delete cancels it on the Scheduled pane.
	h.key("4")
	h.key("delete")
	if h.m.dialog == nil || !strings.Contains(h.m.dialog.title, "Cancel scheduled message 2") {
		t.Fatal("delete does not ask first")
	}
	h.key("y")
	h.wantStatus("cancelled the scheduled sequence number(s) 2 of orders")
	if sch := browse(t, c, "orders", broker.CategoryScheduled); len(sch) != 0 {
		t.Fatal("not cancelled")
	}
}

func TestEditACopy(t *testing.T) {
	clock, c := fixture(t, 0)
	orig := msg("o-1", "first")
	orig.ApplicationProperties = map[string]any{"n": int32(5)}
	send(t, c, "orders", orig)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("e")
	d := h.m.dialog
	if d == nil || d.value(fMessageID) != "o-1" || d.value(fProperties) != "n:int32=5" || d.body.Value() != `{"id":"o-1"}` {
		t.Fatalf("edit dialog: %+v", d)
	}
	h.keys("tab", "tab", "tab", "tab", "end") // the field's text is selected: end edits it
	h.typeText(" again")
	h.key("ctrl+s")
	act := browse(t, c, "orders", broker.CategoryActive)
	if len(act) != 2 || act[1].Subject != "first again" || act[1].ApplicationProperties["n"] != int32(5) {
		t.Fatalf("copy: %+v", act[1])
	}
}

func TestPurgeConfirmsByName(t *testing.T) {
	clock, c := fixture(t, 5)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("P")
	h.typeText("order")
	h.key("enter")
	if h.m.dialog == nil || !strings.Contains(h.m.dialog.err, `the name typed is not "orders"`) {
		t.Fatal("a wrong name purges")
	}
	h.typeText("s")
	h.key("enter")
	if n := len(browse(t, c, "orders", broker.CategoryActive)); n != 0 {
		t.Fatalf("%d left", n)
	}
	h.wantReport("purge orders: 5 message(s) removed, 0 failed")
}

func TestSelectAndSettleASelection(t *testing.T) {
	clock, c := fixture(t, 5)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("L")
	h.key("enter") // N = 10: all five
	if len(h.m.held) != 5 {
		t.Fatalf("held %d", len(h.m.held))
	}
	h.key("2")
	h.keys("space", "space", "j", "space")
	if got := len(h.m.panes[1].selected); got != 3 {
		t.Fatalf("selected %d", got)
	}
	h.key("c")
	if got := seqs(browse(t, c, "orders", broker.CategoryLocked)); got != "3,5" {
		t.Fatalf("locked after completing 1,2,4: %s", got)
	}
	h.wantReport("3 completed, 0 failed")
	h.key("esc")
	h.key("*")
	if len(h.m.panes[1].selected) != 2 {
		t.Fatal("* does not select the whole pane")
	}
	h.key("*")
	if len(h.m.panes[1].selected) != 0 {
		t.Fatal("* again does not clear")
	}
	h.keys("space", "esc")
	if len(h.m.panes[1].selected) != 0 {
		t.Fatal("esc does not clear the selection")
	}
}

// sendTenantOrders sends o-1 … o-30 to orders, even ones for tenant acme
// and odd ones for zeta: the filter tests' traffic.
func sendTenantOrders(t *testing.T, c broker.Client) {
	t.Helper()
	for i := 1; i <= 30; i++ {
		x := msg(fmt.Sprintf("o-%d", i), "order")
		x.ApplicationProperties = map[string]any{"tenant": []string{"acme", "zeta"}[i%2]}
		send(t, c, "orders", x)
	}
}

func TestFilter(t *testing.T) {
	clock, c := fixture(t, 0)
	sendTenantOrders(t, c)
	h := newHarness(t, c, clock, Options{}, 120, 60)
	h.key("/")
	h.typeText("tenant=acme")
	h.key("enter")
	if got := seqs(h.m.panes[0].rows); got != "2,4,6,8,10,12,14,16,18,20,22,24,26,28,30" { // every match: the window is larger
		t.Fatalf("filtered: %s", got)
	}
	if s := h.screen(); !strings.Contains(s, "filter: tenant = acme (30 scanned)") {
		t.Fatalf("no filter note:\n%s", s)
	}
	h.key("/")
	for range "tenant=acme" {
		h.key("backspace")
	}
	h.typeText("O-7")
	h.key("enter")
	if got := seqs(h.m.panes[0].rows); got != "7" {
		t.Fatalf("text filter: %s", got)
	}
	h.key("esc")
	if h.m.filter.active() || len(h.m.panes[0].rows) != min(30, h.m.main.visibleRows(h.m, 0)+1) {
		t.Fatal("esc does not clear the filter")
	}
}

func TestRepliesJumpAndBack(t *testing.T) {
	clock, c := fixture(t, 0)
	req := msg("req-1", "question")
	req.ReplyTo = "payments"
	send(t, c, "orders", req)
	reply := msg("rep-1", "answer")
	reply.CorrelationID = "req-1"
	other := msg("rep-2", "other")
	other.CorrelationID = "req-9"
	send(t, c, "payments", other, reply)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("o")
	if h.m.entity != "payments" || seqs(h.m.panes[0].rows) != "2" {
		t.Fatalf("jump: %s %s", h.m.entity, seqs(h.m.panes[0].rows))
	}
	h.wantStatus(`replies to "req-1" in payments`)
	h.key("esc")
	if h.m.entity != "orders" || h.m.filter.active() {
		t.Fatal("esc does not come back")
	}
}

func TestCopyAndExport(t *testing.T) {
	clock, c := fixture(t, 3)
	dir := t.TempDir()
	h := newHarness(t, c, clock, Options{ExportDir: dir}, 80, 24)
	h.key("y")
	if len(h.clip) != 1 || !strings.Contains(h.clip[0], `"MessageId": "o-1"`) || !strings.Contains(h.clip[0], `"Body": "{\"id\":\"o-1\"}"`) {
		t.Fatalf("clipboard: %q", h.clip)
	}
	h.keys("space", "space")
	h.key("x")
	h.wantStatus("exported 2 message(s)")
	files, _ := filepath.Glob(filepath.Join(dir, "peeklock-orders-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"MessageId":"o-1"`) || !strings.Contains(lines[1], `"MessageId":"o-2"`) {
		t.Fatalf("export:\n%s", b)
	}
}

func TestPauseStopsRefresh(t *testing.T) {
	clock, c := fixture(t, 1)
	f := newFault(c)
	f.noEvents = true
	h := newHarness(t, f, clock, Options{}, 80, 24)
	h.key("p")
	h.wantStatus("PAUSED")
	before := f.count("Entities")
	h.advance(3 * time.Second)
	if f.count("Entities") != before {
		t.Fatal("refreshed while paused")
	}
	h.key("p")
	h.wantStatus("LIVE")
	if f.count("Entities") != before+1 {
		t.Fatal("resume does not refresh at once")
	}
	h.advance(2 * time.Second)
	if got := f.count("Entities"); got != before+3 {
		t.Fatalf("ticks: %d refreshes, want %d", got-before, 3)
	}
}

func TestStaleTicksAreDropped(t *testing.T) {
	clock, c := fixture(t, 1)
	f := newFault(c)
	f.noEvents = true
	h := newHarness(t, f, clock, Options{}, 80, 24)
	before := f.count("Entities")
	h.update(tickMsg{id: h.m.sched.tickID + 7})
	h.settle()
	if f.count("Entities") != before {
		t.Fatal("a stale tick refreshed")
	}
}

func TestRefreshNeverRunsTwice(t *testing.T) {
	clock, c := fixture(t, 1)
	f := newFault(c)
	f.noEvents = true
	h := newHarness(t, f, clock, Options{}, 80, 24)
	f.mu.Lock()
	f.hold = make(chan struct{})
	f.mu.Unlock()
	for i := 0; i < 5; i++ {
		h.update(tickMsg{id: h.m.sched.tickID})
		h.run(h.m.requestRefresh())
		h.run(h.m.startRefresh())
	}
	time.Sleep(50 * time.Millisecond) // room for a second refresh to start, were it allowed
	f.mu.Lock()
	close(f.hold)
	f.hold = nil
	f.mu.Unlock()
	h.settle()
	if f.maxInFlight != 1 {
		t.Fatalf("%d refreshes ran at once", f.maxInFlight)
	}
	if h.m.sched.refreshing {
		t.Fatal("still refreshing")
	}
}

func TestErrorsReachTheStatusBar(t *testing.T) {
	clock, c := fixture(t, 2)
	f := newFault(c)
	h := newHarness(t, f, clock, Options{}, 120, 30)

	f.fail("Entities", &broker.Error{Code: broker.CodeServerBusy, Message: "try later", TrackingID: "tid-1"})
	h.refresh()
	h.wantStatus("server busy: try later (TrackingId: tid-1)")
	if h.m.bar.conn != ui.ConnError {
		t.Fatalf("conn %s", h.m.bar.conn)
	}
	f.fail("Entities", &broker.Error{Code: broker.CodeConnectionLost, Message: "gone"})
	h.refresh()
	h.wantStatus("disconnected")
	f.fail("Entities", nil)
	h.refresh()
	h.wantStatus("connected")

	f.fail("Browse", &broker.Error{Code: broker.CodeUnauthorized, Message: "no Listen claim"})
	h.refresh()
	h.wantStatus("unauthorized: no Listen claim")
	if s := h.screen(); !strings.Contains(s, "error: unauthorized: no Listen claim") {
		t.Fatalf("pane does not say:\n%s", s)
	}
	f.fail("Browse", nil)

	f.fail("Receive", &broker.Error{Code: broker.CodeNotFound, Entity: "orders", TrackingID: "tid-2"})
	h.key("l")
	h.wantStatus(`entity not found (entity "orders") (TrackingId: tid-2)`)
	f.fail("Receive", nil)

	h.key("l")
	f.fail("Settle", &broker.Error{Code: broker.CodeLockLost, Message: "lock expired"})
	h.key("c")
	h.wantStatus("complete of sequence number 1: lock lost: lock expired")
	if len(h.m.held) != 0 || len(h.m.ghosts) != 1 || h.m.ghosts[0].kind != ui.FlashLost {
		t.Fatalf("lost lock: held %d ghosts %+v", len(h.m.held), h.m.ghosts)
	}
	f.fail("Settle", nil)

	h.key("1")
	h.key("l")
	f.fail("RenewLock", &broker.Error{Code: broker.CodeTimeout, Message: "slow"})
	h.key("r")
	h.wantStatus("timeout: slow")
	f.fail("Send", &broker.Error{Code: broker.CodeQuotaExceeded, Message: "full", TrackingID: "tid-3"})
	h.key("n")
	h.key("ctrl+s")
	h.wantStatus("send to orders: quota exceeded: full (TrackingId: tid-3)")
	f.fail("Purge", &broker.Error{Code: broker.CodeUnauthorized, Message: "no Manage claim"})
	h.key("P")
	h.typeText("orders")
	h.key("enter")
	h.wantReport("orders: unauthorized: no Manage claim")
	h.wantStatus("1 failed")
}

func TestResubmitFailureKeepsTheOriginal(t *testing.T) {
	clock, c := fixture(t, 1)
	ctx := context.Background()
	got, _ := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 1})
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: got[0].LockToken, Reason: "r"}); err != nil {
		t.Fatal(err)
	}
	f := newFault(c)
	h := newHarness(t, f, clock, Options{}, 80, 24)
	f.fail("Send", &broker.Error{Code: broker.CodeServerBusy, Message: "busy"})
	h.key("5")
	h.key("s")
	h.wantReport("0 resubmitted, 1 failed")
	h.wantReport("original kept")
	if dlq := browse(t, c, "orders", broker.CategoryDeadLettered); len(dlq) != 1 {
		t.Fatal("the original is gone")
	}
}

func TestReadOnlyRefusesChanges(t *testing.T) {
	clock, c := fixture(t, 2)
	h := newHarness(t, c, clock, Options{ReadOnly: true}, 80, 24)
	for _, k := range []string{"l", "c", "a", "d", "f", "r", "R", "s", "S", "n", "e", "P", "delete", "L"} {
		h.m.bar.err = nil
		h.key(k)
		h.wantErr("read-only mode")
		if broker.CodeOf(h.m.bar.err) != broker.CodeReadOnly {
			t.Fatalf("%s: code %s", k, broker.CodeOf(h.m.bar.err))
		}
		if h.m.dialog != nil {
			t.Fatalf("%s opened a dialog", k)
		}
	}
	h.wantStatus("READ-ONLY")
	if !broker.IsReadOnly(h.m.client) {
		t.Fatal("the client is not wrapped")
	}
	if len(browse(t, c, "orders", broker.CategoryLocked)) != 0 {
		t.Fatal("something was locked")
	}
	// Looking still works.
	h.key("enter")
	if h.m.detail == nil {
		t.Fatal("detail refused")
	}
	h.key("esc")
	h.keys("?", "pgdown")
	if s := h.screen(); !strings.Contains(s, "complete — read-only mode") {
		t.Fatalf("help does not say why:\n%s", s)
	}
}

func TestMissingCapabilitiesDisableKeys(t *testing.T) {
	clock, c := fixture(t, 2)
	f := newFault(c)
	f.noEvents = true
	f.caps = &broker.Capabilities{
		Has: broker.CanPeekLock | broker.CanListEntities | broker.CanBrowse,
		Why: map[broker.Capability]string{broker.CanDefer: "a generic AMQP broker cannot defer"},
	}
	h := newHarness(t, f, clock, Options{}, 80, 24)
	h.key("l")
	h.key("f")
	h.wantErr("defer is disabled: a generic AMQP broker cannot defer")
	if broker.CodeOf(h.m.bar.err) != broker.CodeNotSupported {
		t.Fatalf("code %s", broker.CodeOf(h.m.bar.err))
	}
	h.key("a")
	h.wantErr("abandon is disabled: this endpoint does not support it")
	h.key("c")
	h.wantStatus("completed: sequence number 1")
	// Without CanSeeAllLocks the Locked pane shows the locks held here.
	h.key("1")
	h.key("l")
	if got := seqs(h.m.panes[1].rows); got != "2" {
		t.Fatalf("locked pane %s", got)
	}
}

func TestNoBrowseCapability(t *testing.T) {
	clock, c := fixture(t, 2)
	f := newFault(c)
	f.caps = &broker.Capabilities{Has: broker.CanPeekLock | broker.CanListEntities,
		Why: map[broker.Capability]string{broker.CanBrowse: "RabbitMQ ignores browsing"}}
	h := newHarness(t, f, clock, Options{}, 80, 24)
	if f.count("Browse") != 0 {
		t.Fatal("browsed anyway")
	}
	if s := h.screen(); !strings.Contains(s, "browsing is not supported: RabbitMQ ignores browsing") {
		t.Fatalf("\n%s", s)
	}
	h.key("/")
	h.wantErr("filter is disabled: RabbitMQ ignores browsing")
}

func TestMouse(t *testing.T) {
	clock, c := fixture(t, 30)
	h := newHarness(t, c, clock, Options{}, 120, 40)
	l := h.m.layout()
	s, _ := l.Slot(0)
	h.update(tea.MouseClickMsg{X: s.Rect.X + 10, Y: s.Rect.Y + ui.PaneChrome + 4, Button: tea.MouseLeft})
	h.settle()
	h.wantCursor(5)
	h.update(tea.MouseWheelMsg{X: s.Rect.X + 10, Y: s.Rect.Y + 5, Button: tea.MouseWheelDown})
	h.settle()
	h.wantCursor(8)
	h.update(tea.MouseClickMsg{X: 2, Y: 4, Button: tea.MouseLeft}) // the fourth entity: payments
	h.settle()
	if h.m.entity != "payments" {
		t.Fatalf("click on entity: %s", h.m.entity)
	}
	x := l.Tabs.X + strings.Index(tabLine(h), "5 DLQ")
	h.update(tea.MouseClickMsg{X: x, Y: 0, Button: tea.MouseLeft})
	h.settle()
	if h.m.focus != 4 {
		t.Fatalf("click on tab: focus %d", h.m.focus)
	}
}

// tabLine returns the tab line as plain text.
func tabLine(h *harness) string {
	line := strings.Split(h.screen(), "\n")[0]
	l := h.m.layout()
	r := []rune(line)
	return string(r[l.Tabs.X:])
}

func TestHelpAndQuit(t *testing.T) {
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("?")
	if !h.m.help.open || !strings.Contains(h.screen(), "Keys  ↑/↓ scroll") {
		t.Fatal("no help")
	}
	h.key("j")
	if h.m.help.top != 1 {
		t.Fatal("help does not scroll")
	}
	h.key("?")
	if h.m.help.open {
		t.Fatal("? does not close help")
	}
	h.m.Update(keyMsg("q"))
	_, cmd := h.m.Update(keyMsg("q"))
	if cmd == nil {
		t.Fatal("q returns no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		// a batch with the frame tick
		found := false
		if b, ok := cmd().(tea.BatchMsg); ok {
			for _, c := range b {
				if c != nil {
					if _, ok := c().(tea.QuitMsg); ok {
						found = true
					}
				}
			}
		}
		if !found {
			t.Fatal("q does not quit")
		}
	}
}

func TestEventsFlashLocksExpiringElsewhere(t *testing.T) {
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	// Another receiver locks the message; the dashboard sees it by events.
	if _, err := c.Receive(context.Background(), broker.ReceiveRequest{Entity: "orders", Max: 1}); err != nil {
		t.Fatal(err)
	}
	h.advance(200 * time.Millisecond)
	h.key("2")
	if got := seqs(h.m.panes[1].rows); got != "1" {
		t.Fatalf("locked pane %s", got)
	}
	h.advance(30 * time.Second)
	found := false
	for _, g := range h.m.ghosts {
		if g.msg.SequenceNumber == 1 && g.kind == ui.FlashExpired {
			found = true
		}
	}
	if !found {
		t.Fatalf("no expired flash: %+v", h.m.ghosts)
	}
}

func TestSanitisedEverywhere(t *testing.T) {
	clock, c := fixture(t, 0)
	evil := &broker.Message{MessageID: "id\x1b]52;c;aGk=\x07", Subject: "s\u202eevil\x1b[2J", ContentType: "text/plain",
		ApplicationProperties: map[string]any{"k\x1b[1m": "v\u009b31m"}, Body: []byte("body\x1b]8;;http://x\x1b\\")}
	send(t, c, "orders", evil)
	h := newHarness(t, c, clock, Options{}, 120, 50)
	check := func(where string) {
		s := h.screen()
		for _, r := range s {
			if r == 0x1b || (r >= 0x80 && r <= 0x9f) || r == 0x202e || r == 0x07 {
				t.Fatalf("%s: %U reached the screen", where, r)
			}
		}
	}
	check("pane")
	h.key("enter")
	check("detail")
	if !strings.Contains(h.screen(), "body␛]8;;http://x␛\\") {
		t.Fatalf("body not shown neutralised:\n%s", h.screen())
	}
}

// An endpoint without entities says so in the panes instead of loading
// forever, and says how to make one.
func TestNoEntitiesSaysSo(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	eng := newEngine(t, clock)
	h := newHarness(t, eng, clock, Options{}, 100, 30)
	h.m.switchEntity("") // as without --entity: the harness picks "orders"
	h.refresh()
	s := h.screen()
	if strings.Contains(s, "loading…") || !strings.Contains(s, "no entity: create a queue or subscription") {
		t.Fatalf("screen without entities:\n%s", s)
	}
}
