package model

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
)

// goldenFixture fills orders with messages in every category: active,
// locked by another receiver (at different points of their countdown),
// deferred, scheduled and dead-lettered.
func goldenFixture(t *testing.T) (*clockwork.FakeClock, broker.Client) {
	t.Helper()
	clock, c := fixture(t, 0)
	ctx := context.Background()
	for i := 1; i <= 12; i++ {
		x := msg(fmt.Sprintf("order-%03d", i), fmt.Sprintf("OrderPlaced #%d", i))
		x.ApplicationProperties = map[string]any{"tenant": "acme", "priority": int32(i % 3)}
		if i == 6 { // the first active one after the locks below
			x.CorrelationID = "cart-77"
			x.ReplyTo = "payments"
			x.Body = []byte(`{"order":1,"items":[{"sku":"pen","qty":2}],"paid":false,"note":null}`)
		}
		send(t, c, "orders", x)
		clock.Advance(time.Second)
	}
	// Lock three (held by "another receiver"), one of them 20 s ago.
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(20 * time.Second)
	more, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 4})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, more...)
	// Defer one, dead-letter two.
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Defer, Entity: "orders", Token: got[1].LockToken}); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: got[2].LockToken,
		Reason: "ValidationFailed", Description: "sku 'pen' is unknown"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: got[3].LockToken,
		Reason: broker.ReasonMaxDeliveryCountExceeded, Description: "delivered 3 times"}); err != nil {
		t.Fatal(err)
	}
	// Schedule two.
	if _, err := c.Schedule(ctx, "orders", clock.Now().Add(90*time.Second), []*broker.Message{msg("later-1", "Reminder"), msg("later-2", "Reminder")}); err != nil {
		t.Fatal(err)
	}
	send(t, c, "payments", msg("pay-1", "PaymentTaken"))
	clock.Advance(5 * time.Second)
	return clock, c
}

// TestGoldenViews compares every pane and the detail view at three sizes
// with testdata/TestGoldenViews/*.golden (go test -update rewrites them).
func TestGoldenViews(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			clock, c := goldenFixture(t)
			h := newHarness(t, c, clock, Options{}, size[0], size[1])
			for i, name := range []string{"active", "locked", "deferred", "scheduled", "deadlettered"} {
				h.key(fmt.Sprint(i + 1))
				t.Run(name, func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			}
			h.key("1")
			h.key("enter")
			t.Run("detail", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			h.key("G")
			t.Run("detail-body", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			h.key("esc")
			h.key("5")
			h.key("enter")
			t.Run("detail-deadlettered", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
		})
	}
}

// TestGoldenZoomed compares the zoomed Dead-lettered and Active panes, and
// the detail view of a zoomed pane, at a phone's and a small terminal's
// size with testdata/TestGoldenZoomed/*.golden.
func TestGoldenZoomed(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			clock, c := goldenFixture(t)
			h := newHarness(t, c, clock, Options{}, size[0], size[1])
			h.keys("5", "z")
			t.Run("deadlettered", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			h.key("enter")
			t.Run("detail-deadlettered", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			h.keys("esc", "1")
			t.Run("active", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			h.key("z")
			t.Run("unzoomed", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
		})
	}
}

// TestTinyAndOddSizesDoNotBreak renders every view at sizes down to the
// smallest the model accepts; each frame must have exactly the screen's
// lines.
func TestTinyAndOddSizesDoNotBreak(t *testing.T) {
	clock, c := goldenFixture(t)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	for _, size := range [][2]int{{1, 1}, {20, 6}, {33, 9}, {59, 14}, {61, 30}, {99, 25}, {139, 41}, {141, 80}, {300, 100}} {
		h.update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		h.settle()
		for _, k := range []string{"1", "2", "3", "4", "5", "enter", "esc", "?", "?", "n", "esc", "P", "esc", "i", "G", "esc", "C", "G", "esc",
			"z", "enter", "esc", "z", "b", "5", "b", "m", "m"} {
			h.key(k)
			lines := strings.Split(h.screen(), "\n")
			if len(lines) != h.m.height {
				t.Fatalf("%dx%d after %s: %d lines, want %d", size[0], size[1], k, len(lines), h.m.height)
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w != h.m.width {
					t.Fatalf("%dx%d after %s: line %d is %d wide, want %d:\n%s", size[0], size[1], k, i, w, h.m.width, h.screen())
				}
			}
		}
	}
}
