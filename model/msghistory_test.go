package model

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/peeklock/peeklock/broker"
)

// scrollToHistory scrolls the detail view so that its History section is
// at the top, and fails t when there is none.
func scrollToHistory(t *testing.T, h *harness) {
	t.Helper()
	for i, l := range h.m.detail.lines(h.m) {
		if strings.Contains(l, "── History") {
			h.m.detail.top = max(0, i-1)
			return
		}
	}
	t.Fatalf("the detail view has no History section:\n%s", h.screen())
}

// TestGoldenHistory compares the detail view's timeline at 60×20 with
// testdata/TestGoldenHistory/*.golden: a message the broker kept the
// history of (sent by an application, locked by a receiver whose name
// carries an escape sequence, abandoned, dead-lettered), and on an endpoint
// that keeps none, what this dashboard did.
func TestGoldenHistory(t *testing.T) {
	clock, c := fixture(t, 0)
	ctx := context.Background()
	app := broker.ActingAs(c, "connection 00000000000000a1 (container \"shop\") link \"orders-sender\"")
	evil := broker.ActingAs(c, "connection 00000000000000b2 (container \"worker\x1b[2J\") link \"r\"")
	x := msg("order-001", "OrderPlaced #1")
	if err := app.Send(ctx, "orders", []*broker.Message{x}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	for _, kind := range []broker.SettleKind{broker.Abandon, broker.DeadLetter} {
		got, err := evil.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("receive: %v %v", got, err)
		}
		clock.Advance(2 * time.Second)
		s := broker.Settlement{Kind: kind, Entity: "orders", Token: got[0].LockToken, Reason: "ValidationFailed", Description: "sku 'pen' is unknown"}
		if kind == broker.Abandon {
			s = broker.Settlement{Kind: kind, Entity: "orders", Token: got[0].LockToken, PropertiesToModify: map[string]any{"retry": int64(1)}}
		}
		if err := evil.Settle(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, c, clock, Options{}, 60, 20)
	h.keys("5", "enter")
	scrollToHistory(t, h)
	t.Run("kept", func(t *testing.T) {
		s := h.screen()
		if strings.ContainsRune(s, 0x1b) || !strings.Contains(s, "worker␛[2J") {
			t.Fatalf("the actor is not shown neutralised:\n%s", s)
		}
		golden.RequireEqual(t, s)
	})

	// On an endpoint that keeps no history, what this dashboard did.
	clock2, c2 := fixture(t, 0)
	send(t, c2, "orders", msg("order-002", "OrderPlaced #2"))
	r := newHarness(t, noHistory{c2}, clock2, Options{}, 60, 20)
	r.key("l") // lock it
	r.keys("2", "enter")
	scrollToHistory(t, r)
	t.Run("remote", func(t *testing.T) {
		s := r.screen()
		if !strings.Contains(s, "keeps no message history") || !strings.Contains(s, "locked until") {
			t.Fatalf("remote timeline:\n%s", s)
		}
		golden.RequireEqual(t, s)
	})
}

// noHistory is a client whose endpoint keeps no message history, as a
// remote Service Bus namespace.
type noHistory struct{ broker.Client }
