package model

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
)

// requestFixture puts n orders in orders, a request (MessageId req-1,
// ReplyTo payments) dead-lettered in orders when dead is set (else active),
// and its reply (CorrelationId req-1) in payments after two others.
func requestFixture(t *testing.T, n int, dead bool) (*clockwork.FakeClock, broker.Client) {
	t.Helper()
	clock, c := fixture(t, n)
	ctx := context.Background()
	req := msg("req-1", "question")
	req.ReplyTo = "payments"
	send(t, c, "orders", req)
	if dead {
		got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: n + 1})
		if err != nil || len(got) != n+1 {
			t.Fatalf("receive: %v %d", err, len(got))
		}
		for _, x := range got {
			s := broker.Settlement{Kind: broker.Abandon, Entity: "orders", Token: x.LockToken}
			if x.MessageID == "req-1" {
				s.Kind, s.Reason = broker.DeadLetter, "NoConsumer"
			}
			if err := c.Settle(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	reply := msg("rep-1", "answer")
	reply.CorrelationID = "req-1"
	send(t, c, "payments", msg("p-1", "other"), msg("p-2", "other"), reply)
	return clock, c
}

// stepOnce handles messages until one page of the search has been taken.
func stepOnce(t *testing.T, h *harness) {
	t.Helper()
	for {
		select {
		case msg := <-h.msgs:
			h.update(msg)
			if _, ok := msg.(searchStepMsg); ok {
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no search step arrived")
		}
	}
}

func countSteps(h *harness) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.seen {
		if _, ok := m.(searchStepMsg); ok {
			n++
		}
	}
	return n
}

func TestFindRequestOpensItsDetailAndEscComesBack(t *testing.T) {
	clock, c := requestFixture(t, 3, true)
	h := newHarness(t, c, clock, Options{Entity: "payments"}, 100, 30)
	h.keys("j", "j")
	if cur := h.m.focused().current(); cur == nil || cur.MessageID != "rep-1" {
		t.Fatalf("cursor on %v", cur)
	}
	h.key("O")
	d := h.m.detail
	if h.m.entity != "orders" || h.m.focus != 4 || d == nil || d.msg.MessageID != "req-1" || d.address != "orders/$DeadLetterQueue" {
		t.Fatalf("not on the request: entity %s focus %d detail %+v", h.m.entity, h.m.focus, d)
	}
	// orders: 3 active, then the request in the dead-letter queue.
	if want := `request "req-1": orders › Dead-lettered › 4, found among 4 messages (esc goes back)`; h.m.bar.info != want {
		t.Fatalf("info %q, want %q", h.m.bar.info, want)
	}
	if s := h.screen(); !strings.Contains(s, "orders/$DeadLetterQueue › Dead-lettered › 4") || !strings.Contains(s, "esc: back to the reply") {
		t.Fatalf("detail view:\n%s", s)
	}
	if got := seqs(h.m.panes[4].rows); got != "4" {
		t.Fatalf("Dead-lettered window %s", got)
	}
	h.key("esc")
	if h.m.entity != "payments" || h.m.detail != nil || len(h.m.jumps) != 0 || h.m.bar.info != "back to payments" {
		t.Fatalf("esc: entity %s detail %v jumps %d info %q", h.m.entity, h.m.detail, len(h.m.jumps), h.m.bar.info)
	}
	if cur := h.m.focused().current(); cur == nil || cur.MessageID != "rep-1" {
		t.Fatalf("cursor back on %v", cur)
	}
}

func TestFindRequestFromTheDetailViewComesBackToIt(t *testing.T) {
	clock, c := requestFixture(t, 0, false)
	h := newHarness(t, c, clock, Options{Entity: "payments"}, 100, 30)
	h.keys("j", "j", "enter")
	if s := h.screen(); !strings.Contains(s, "O: find the request: MessageId = this CorrelationId") {
		t.Fatalf("no hint:\n%s", s)
	}
	h.key("O")
	if h.m.entity != "orders" || h.m.focus != 0 || h.m.detail == nil || h.m.detail.msg.MessageID != "req-1" {
		t.Fatalf("not on the request: %s %d %v", h.m.entity, h.m.focus, h.m.detail)
	}
	// The request asks for replies in payments: o from here jumps there.
	if s := h.screen(); !strings.Contains(s, "o: messages whose CorrelationId is this MessageId, in payments") {
		t.Fatalf("request detail:\n%s", s)
	}
	h.key("esc")
	if h.m.entity != "payments" || h.m.detail == nil || h.m.detail.msg.MessageID != "rep-1" || len(h.m.jumps) != 0 {
		t.Fatalf("esc: %s %v %d", h.m.entity, h.m.detail, len(h.m.jumps))
	}
	h.key("esc")
	if h.m.detail != nil || h.m.entity != "payments" {
		t.Fatal("second esc does not close the reply's detail")
	}
}

func TestFindRequestLooksInLikelyEntitiesFirst(t *testing.T) {
	clock, c := requestFixture(t, 0, false)
	h := newHarness(t, c, clock, Options{Entity: "payments"}, 100, 30)
	plan, likely := h.m.find.plan(h.m, "payments")
	if strings.Join(plan, ",") != "events/Subscriptions/audit,orders,payments" || likely != 0 {
		t.Fatalf("plan before seeing orders: %v %d", plan, likely)
	}
	h.key("[") // orders: its request says ReplyTo payments
	if h.m.entity != "orders" {
		t.Fatalf("on %s", h.m.entity)
	}
	plan, likely = h.m.find.plan(h.m, "payments")
	if strings.Join(plan, ",") != "orders,events/Subscriptions/audit,payments" || likely != 1 {
		t.Fatalf("plan after seeing orders: %v %d", plan, likely)
	}
	h.key("]")
	h.keys("j", "j", "O")
	if want := `request "req-1": orders › Active › 1, found among 1 messages (esc goes back)`; h.m.bar.info != want {
		t.Fatalf("info %q, want %q", h.m.bar.info, want)
	}
}

func TestFindRequestNotFound(t *testing.T) {
	clock, c := fixture(t, 3)
	lone := msg("rep-9", "answer")
	lone.CorrelationID = "req-404"
	self := msg("self", "its own correlation")
	self.CorrelationID = "self"
	send(t, c, "payments", lone, self)
	h := newHarness(t, c, clock, Options{Entity: "payments"}, 100, 30)
	h.key("O")
	if want := `request "req-404": not found among 5 messages in 3 entities`; h.m.bar.info != want || h.m.entity != "payments" || h.m.detail != nil {
		t.Fatalf("info %q, want %q (entity %s)", h.m.bar.info, want, h.m.entity)
	}
	if h.m.find.search != nil || strings.Contains(h.screen(), "Looking for the request") {
		t.Fatal("the search is still on screen")
	}
	// A message whose MessageId is its own CorrelationId is not its request.
	h.key("j")
	h.key("O")
	if want := `request "self": not found among 5 messages in 3 entities`; h.m.bar.info != want {
		t.Fatalf("info %q, want %q", h.m.bar.info, want)
	}
	h.key("k")
	h.update(keyMsg("O"))
	if h.m.find.search == nil {
		t.Fatal("no search")
	}
	h.update(keyMsg("O"))
	h.wantErr("find the request of a reply: a search is running already (esc cancels it)")
	h.settle()
}

func TestFindRequestStopsAtTheLimit(t *testing.T) {
	clock, c := requestFixture(t, 3, false)
	h := newHarness(t, c, clock, Options{Entity: "payments", SearchScan: 3}, 100, 30)
	h.keys("j", "j", "O")
	// audit is empty; orders holds 3 orders before the request.
	if want := `request "req-1": not found among 3 messages in 2 of 3 entities: stopped at the search limit of 3 messages`; h.m.bar.info != want {
		t.Fatalf("info %q, want %q", h.m.bar.info, want)
	}
}

func TestFindRequestCancelled(t *testing.T) {
	clock, c := fixture(t, 3)
	lone := msg("rep-9", "answer")
	lone.CorrelationID = "req-404"
	send(t, c, "payments", lone)
	h := newHarness(t, c, clock, Options{Entity: "payments"}, 100, 30)
	h.update(keyMsg("O"))
	s := h.screen()
	for _, want := range []string{"Looking for the request", "MessageId = req-404", "in events/Subscriptions/audit › Active (entity 1 of 3)",
		"0 of at most 10000 messages browsed", "esc cancel"} {
		if !strings.Contains(s, want) {
			t.Fatalf("progress without %q:\n%s", want, s)
		}
	}
	for range 6 { // audit's five categories, then orders' Active
		stepOnce(t, h)
	}
	if s := h.screen(); !strings.Contains(s, "in orders › Locked (entity 2 of 3)") || !strings.Contains(s, "3 of at most 10000 messages browsed") {
		t.Fatalf("progress:\n%s", s)
	}
	h.update(keyMsg("esc"))
	h.settle()
	if want := `request "req-404": search cancelled after 3 messages in 2 of 3 entities`; h.m.bar.info != want {
		t.Fatalf("info %q, want %q", h.m.bar.info, want)
	}
	// The page in flight came back and was dropped; none followed.
	if n := countSteps(h); n != 7 {
		t.Fatalf("%d pages", n)
	}
	if h.m.find.search != nil || h.m.entity != "payments" || strings.Contains(h.screen(), "Looking for the request") {
		t.Fatal("the search goes on")
	}
}

func TestFindRequestCancelledKeepsTheDetailView(t *testing.T) {
	clock, c := requestFixture(t, 0, false)
	h := newHarness(t, c, clock, Options{Entity: "payments"}, 100, 30)
	h.keys("j", "j", "enter")
	h.update(keyMsg("O"))
	h.update(keyMsg("esc"))
	h.settle()
	if h.m.find.search != nil || h.m.detail == nil || h.m.detail.msg.MessageID != "rep-1" || h.m.entity != "payments" {
		t.Fatalf("esc: search %v detail %v", h.m.find.search, h.m.detail)
	}
	if !strings.HasPrefix(h.m.bar.info, `request "req-1": search cancelled after 0 messages in 0 of 3 entities`) {
		t.Fatalf("info %q", h.m.bar.info)
	}
}

func TestFindRequestBrowseError(t *testing.T) {
	clock, c := requestFixture(t, 0, false)
	f := newFault(c)
	h := newHarness(t, f, clock, Options{Entity: "payments"}, 100, 30)
	h.keys("j", "j")
	f.fail("Browse", broker.Errorf(broker.CodeConnectionLost, "the link dropped"))
	h.key("O")
	want := "find the request of a reply: browsing events/Subscriptions/audit › Active: connection lost: the link dropped"
	if h.m.bar.err == nil || h.m.bar.err.Error() != want || broker.CodeOf(h.m.bar.err) != broker.CodeConnectionLost {
		t.Fatalf("error %v, want %q", h.m.bar.err, want)
	}
	if h.m.find.search != nil || h.m.entity != "payments" {
		t.Fatal("the search goes on after an error")
	}
	// An entity deleted since the list is skipped.
	f.fail("Browse", broker.Errorf(broker.CodeNotFound, "gone"))
	h.key("O")
	if want := `request "req-1": not found among 0 messages in 3 entities`; h.m.bar.info != want {
		t.Fatalf("info %q, want %q", h.m.bar.info, want)
	}
}

func TestFindRequestRefusals(t *testing.T) {
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("O")
	h.wantErr("find the request of a reply: the message has no CorrelationId")
	h.key("]")
	h.key("O")
	h.wantErr("find the request of a reply: no message here")
}

// TestFlowFindRequest runs the search in a real program on the engine:
// from a reply in payments to its request in orders, and back.
func TestFlowFindRequest(t *testing.T) {
	f := newFlow(t, Options{}, 1)
	reply := msg("rep-1", "answer")
	reply.CorrelationID = "o-1"
	send(t, f.eng, "payments", reply)
	f.press("]")
	f.waitFor("Active 1  rows 1–1", "rep-1")
	f.press("O")
	f.waitFor("orders › Active › 1", "Message 1 in orders", "esc: back to the reply", `request "o-1": orders › Active › 1, found`)
	f.press("esc")
	f.waitFor("back to payments", "rep-1")
	if s := f.p.text(); strings.Contains(s, "Message 1 in orders") {
		t.Fatalf("still on the request:\n%s", s)
	}
}
