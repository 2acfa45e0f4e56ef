package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

func TestFuzzyScore(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		ok            bool
	}{
		{"", "orders", true},
		{"ord", "orders", true},
		{"ORD", "orders", true},
		{"evaud", "events/Subscriptions/audit", true},
		{"xyz", "orders", false},
		{"sro", "orders", false}, // order matters
	} {
		if _, ok := fuzzyScore(c.pattern, c.name); ok != c.ok {
			t.Errorf("fuzzyScore(%q, %q) ok = %v", c.pattern, c.name, ok)
		}
	}
	// A match at a word start beats one inside a word; a prefix beats both.
	pay, _ := fuzzyScore("pay", "payments")
	sub, _ := fuzzyScore("pay", "events/Subscriptions/pay-audit")
	mid, _ := fuzzyScore("pay", "prepaying")
	if !(pay > sub && sub > mid) {
		t.Errorf("scores: prefix %d, word %d, inside %d", pay, sub, mid)
	}
}

// TestJumpToAnEntity: : lists the entities, typing narrows the list
// fuzzily, ↑/↓ choose and enter shows the chosen one; a topic opens its
// information view.
func TestJumpToAnEntity(t *testing.T) {
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key(":")
	if h.m.dialog == nil || h.m.dialog.kind != dlgJump || len(h.m.dialog.jump.matches) != 4 {
		t.Fatalf("jump dialog: %+v", h.m.dialog)
	}
	h.typeText("evau")
	if s := h.screen(); !strings.Contains(s, "▸ events/Subscriptions/audit") {
		t.Fatalf("the match is not chosen:\n%s", s)
	}
	h.key("enter")
	if h.m.entity != "events/Subscriptions/audit" || h.m.dialog != nil {
		t.Fatalf("jumped to %q", h.m.entity)
	}
	h.key(":")
	h.typeText("e")
	h.keys("down", "up", "down")
	chosen := h.m.entities[h.m.dialog.jump.matches[h.m.dialog.jump.sel]].Path
	h.key("enter")
	if h.m.entity != chosen {
		t.Fatalf("enter showed %s, want the chosen %s", h.m.entity, chosen)
	}
	h.key(":")
	h.typeText("events")
	h.key("enter")
	if h.m.entity != "events" || h.m.entInfo == nil {
		t.Fatal("a topic chosen by jump does not open its information view")
	}
	h.key("esc")
	h.key(":")
	h.typeText("zzz")
	h.key("enter")
	if h.m.dialog == nil || !strings.Contains(h.m.dialog.err, `no entity matches "zzz"`) {
		t.Fatal("a jump to nothing does not say so")
	}
}

// TestTopicClickOpensInfo: a click on a topic in the entity list shows it
// and its information view.
func TestTopicClickOpensInfo(t *testing.T) {
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	l := h.m.layout()
	row := -1
	for i, e := range h.m.entities {
		if e.Path == "events" {
			row = i
		}
	}
	h.update(tea.MouseClickMsg{X: 2, Y: l.Sidebar.Y + 1 + row - h.m.main.entityTop, Button: tea.MouseLeft})
	h.settle()
	if h.m.entity != "events" || h.m.entInfo == nil {
		t.Fatalf("click on the topic: entity %s, info open %v", h.m.entity, h.m.entInfo != nil)
	}
}

// TestLastEntityRememberedPerEndpoint: the entity shown last is shown again
// at the next start on the same endpoint; one that is gone gives way to
// the first.
func TestLastEntityRememberedPerEndpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{StateDir: dir, Entity: "orders"}, 80, 24)
	h.key("]")
	if h.m.entity != "payments" {
		t.Fatalf("] went to %s", h.m.entity)
	}
	h.m.Close()
	b, err := os.ReadFile(filepath.Join(dir, lastEntityFile))
	if err != nil || !strings.Contains(string(b), `"payments"`) {
		t.Fatalf("state file: %s, %v", b, err)
	}
	m := New(c, Options{StateDir: dir, Clock: clock})
	if m.entity != "payments" {
		t.Fatalf("at start: %q, want the remembered payments", m.entity)
	}
	m.Close()
	// Another endpoint remembers its own.
	if got := lastEntity(dir, "sb://elsewhere/"); got != "" {
		t.Fatalf("another endpoint got %q", got)
	}
	// Gone: the first entity is shown.
	if err := saveLastEntity(dir, c.Endpoint(), "gone"); err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, c, clock, Options{StateDir: dir}, 80, 24)
	if h2.m.entity != "events/Subscriptions/audit" { // the first queue or subscription
		t.Fatalf("a remembered entity that is gone: showing %q", h2.m.entity)
	}
}

// TestSessionIdColumn: panes of a session-aware entity show each message's
// SessionId.
func TestSessionIdColumn(t *testing.T) {
	clock, c := fixture(t, 0)
	if err := c.(*engine.Engine).CreateEntity(t.Context(), broker.Entity{Path: "carts",
		Settings: broker.EntitySettings{RequiresSession: true}}); err != nil {
		t.Fatal(err)
	}
	x := msg("c-1", "added")
	x.SessionID = "cart-42"
	send(t, c, "carts", x)
	h := newHarness(t, c, clock, Options{Entity: "carts"}, 100, 30)
	s := h.screen()
	if !strings.Contains(s, "SessionId") || !strings.Contains(s, "cart-42") {
		t.Fatalf("no SessionId column:\n%s", s)
	}
	h2 := newHarness(t, c, clock, Options{Entity: "orders"}, 100, 30)
	if strings.Contains(h2.screen(), "SessionId") {
		t.Fatal("a SessionId column on an entity without sessions")
	}
}
