package model

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// stripped is s without styling.
func stripped(s string) string { return ansi.Strip(s) }

// resize gives the model a new screen size and settles.
func (h *harness) resize(w, hh int) {
	h.t.Helper()
	h.update(tea.WindowSizeMsg{Width: w, Height: hh})
	h.settle()
}

// longDescription is longer than a phone's screen is wide.
const longDescription = "payload rejected by the schema registry: field 'customer.address.postcode' must match ^[0-9]{5}$ in version 7"

// deadLetterOne locks the first active message of orders and dead-letters
// it with reason and description.
func deadLetterOne(t *testing.T, c broker.Client, reason, description string) {
	t.Helper()
	ctx := context.Background()
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("receive: %v %v", got, err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: got[0].LockToken,
		Reason: reason, Description: description}); err != nil {
		t.Fatal(err)
	}
}

// joined returns the screen's lines trimmed and joined by spaces, so that
// a wrapped text can be looked for whole.
func joined(screen string) string {
	var parts []string
	for _, l := range strings.Split(screen, "\n") {
		// Drop the entity list, if any, left of the separator.
		if i := strings.Index(l, "│"); i >= 0 {
			l = l[i+len("│"):]
		}
		parts = append(parts, strings.TrimSpace(l))
	}
	return regexp.MustCompile(`\s+`).ReplaceAllString(strings.Join(parts, " "), " ")
}

// TestDeadLetterDetailOpensWithWhy opens a dead-lettered message at the
// sizes of a phone and of a small terminal: the view starts with the
// reason, the description (wrapped, never cut), the source entity, the
// delivery count and the time, before the broker properties.
func TestDeadLetterDetailOpensWithWhy(t *testing.T) {
	for _, size := range [][2]int{{40, 30}, {60, 20}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			clock, c := fixture(t, 2)
			deadLetterOne(t, c, "SchemaValidationFailed", longDescription)
			h := newHarness(t, c, clock, Options{}, size[0], size[1])
			h.keys("5", "enter")
			if h.m.detail == nil {
				t.Fatal("no detail view")
			}
			s := h.screen()
			all := joined(s)
			for _, want := range []string{"Why it is dead-lettered", "Reason SchemaValidationFailed", "Deliveries 1 (DeliveryCount)",
				"Source orders (dead-lettered in this entity)"} {
				if !strings.Contains(all, want) {
					t.Errorf("%q not on screen:\n%s", want, s)
				}
			}
			if size[1] >= 24 && !strings.Contains(all, longDescription) {
				t.Errorf("the description is not whole:\n%s", s)
			}
			why := strings.Index(s, "Why it is dead-lettered")
			if props := strings.Index(s, "Broker properties"); props >= 0 && props < why {
				t.Errorf("the broker properties come first:\n%s", s)
			}
			// Every line of the view, whole on screen: scroll to the end
			// and check that no value was cut with "…".
			lines := h.m.detail.lines(h.m)
			for i, l := range lines {
				if w := len([]rune(stripped(l))); w > h.m.layout().Main.W {
					t.Errorf("line %d is %d wide: %q", i, w, stripped(l))
				}
			}
			if all := stripped(strings.Join(lines, "\n")); strings.Contains(all, "…") {
				t.Errorf("a value of the detail view was cut:\n%s", all)
			}
		})
	}
}

// TestDeadLetterCountsVisibleAtAnyWidth: the tab line names the
// dead-letter count at every width, the entity list shows each entity's
// (X column) when it is on screen, and without the list the tab line
// counts the other entities' dead-lettered messages.
func TestDeadLetterCountsVisibleAtAnyWidth(t *testing.T) {
	clock, c := fixture(t, 4)
	deadLetterOne(t, c, "A", "a")
	send(t, c, "payments", msg("p-1", "pay"))
	ctx := context.Background()
	got, _ := c.Receive(ctx, broker.ReceiveRequest{Entity: "payments", Max: 1})
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "payments", Token: got[0].LockToken, Reason: "B"}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, c, clock, Options{}, 80, 24)
	for _, w := range []int{30, 40, 50, 60, 70, 80, 100, 120, 160, 200} {
		h.resize(w, 24)
		s := h.screen()
		if tabs := strings.Split(s, "\n")[0]; !strings.Contains(tabs, "DLQ 1") && !strings.Contains(tabs, "Dead-lettered 1") {
			t.Errorf("at %d the tab line has no dead-letter count: %q", w, tabs)
		}
		l := h.m.layout()
		if l.Sidebar.W == 0 {
			if w >= 40 && !strings.Contains(s, "X 1 in 1 other") && !strings.Contains(s, "+X 1") {
				t.Errorf("at %d without the entity list, the other entities' dead-letters are not counted:\n%s", w, s)
			}
			continue
		}
		for _, row := range strings.Split(s, "\n")[1:5] {
			side := row[:strings.Index(row, "│")]
			if strings.HasPrefix(side, "orders") || strings.HasPrefix(side, "payments") {
				if !regexp.MustCompile(`\s1\s+\S*\s*$`).MatchString(side) && !regexp.MustCompile(`\s1\s+$`).MatchString(side) {
					t.Errorf("at %d the list row %q does not end with its dead-letter count", w, side)
				}
			}
		}
	}
}

// TestHelpExplainsMarksAndColumns: the help screen has a legend for the
// row marks and the entity list's columns.
func TestHelpExplainsMarksAndColumns(t *testing.T) {
	c := &ui.Common{Width: 60, Height: 20, Styles: testStyles()}
	km := keymap.DefaultKeyMap()
	c.KeyMap = &km
	all := stripped(strings.Join(ui.HelpLines(c, func(*key.Binding) string { return "" }, 60), "\n"))
	for _, want := range []string{"▸ the cursor", "◆ locked by this dashboard", "↻", "● selected", "X dead-lettered", "Σ all of them"} {
		if !strings.Contains(all, want) {
			t.Errorf("the legend lacks %q:\n%s", want, all)
		}
	}
}
