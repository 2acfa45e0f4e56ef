package model

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// unknownCounts is an endpoint that cannot count (a generic AMQP broker):
// its entities come with Counts.Unknown and only the locks it holds.
type unknownCounts struct{ *faultClient }

func (u unknownCounts) Entities(ctx context.Context) ([]broker.Entity, error) {
	ents, err := u.faultClient.Entities(ctx)
	for i := range ents {
		ents[i].Counts = broker.Counts{Locked: ents[i].Counts.Locked, Unknown: true}
	}
	return ents, err
}

// TestUnknownCountsShowAsQuestionMarks: counts the endpoint does not know
// are "?" in the tabs, the panes and the entity list, never 0; the locks
// the dashboard holds are counted.
func TestUnknownCountsShowAsQuestionMarks(t *testing.T) {
	clock, c := fixture(t, 3)
	f := newFault(c)
	f.caps = &broker.Capabilities{Has: broker.CanPeekLock | broker.CanDeadLetter | broker.CanPurge,
		Why:  map[broker.Capability]string{broker.CanBrowse: "no peeking here"},
		Warn: map[broker.Capability]string{broker.CanDeadLetter: "RabbitMQ drops the message unless its queue has a dead-letter exchange"}}
	f.noEvents = true
	h := newHarness(t, unknownCounts{f}, clock, Options{}, 120, 30)
	s := h.screen()
	tabs := strings.Split(s, "\n")[0]
	for _, want := range []string{"1 Active ?", "2 Locked 0", "5 DLQ ?"} {
		if !strings.Contains(tabs, want) {
			t.Errorf("tabs %q lack %q", tabs, want)
		}
	}
	if !strings.Contains(s, "orders              ?   0   ?   ?   ?") {
		t.Errorf("the entity list does not show unknown counts as ?:\n%s", s)
	}
	h.key("l")
	if !strings.Contains(h.screen(), "2 Locked 1") {
		t.Fatalf("the held lock is not counted:\n%s", h.screen())
	}
	// Dead-lettering warns what the broker will do with the message.
	h.keys("2", "d")
	if h.m.dialog == nil || !strings.Contains(stripped(strings.Join(h.m.dialog.text, " ")), "RabbitMQ drops the message unless") {
		t.Fatalf("no warning in the dead-letter dialog: %+v", h.m.dialog)
	}
	h.key("esc")
}

// noList is an endpoint without an entity list (a generic AMQP broker
// started without --entity): it lists nothing.
type noList struct{ *faultClient }

func (noList) Entities(context.Context) ([]broker.Entity, error) { return nil, nil }

// TestNameAnEntityWithoutList: without an entity list and --entity, the
// panes say how to name one, and : offers the typed name as an entity to
// watch; once named it stays in the entity list across refreshes and its
// messages can be locked.
func TestNameAnEntityWithoutList(t *testing.T) {
	clock, c := fixture(t, 2)
	f := newFault(c)
	f.caps = &broker.Capabilities{Has: broker.CanPeekLock | broker.CanDeadLetter | broker.CanPurge,
		Why: map[broker.Capability]string{broker.CanBrowse: "no peeking here", broker.CanListEntities: "no list here"}}
	f.noEvents = true
	h := newHarness(t, noList{f}, clock, Options{StateDir: t.TempDir()}, 80, 24) // no --entity
	if s := h.screen(); !strings.Contains(s, "no entity: press : to name a queue or address") {
		t.Fatalf("the screen does not say how to name an entity:\n%s", s)
	}
	h.key(":")
	if h.m.dialog == nil || h.m.dialog.title != "Name a queue or an address" {
		t.Fatalf("no naming dialog: %+v", h.m.dialog)
	}
	h.typeText("orders")
	if s := h.screen(); !strings.Contains(s, "▸ watch orders (new)") {
		t.Fatalf("the dialog does not offer the typed name:\n%s", s)
	}
	h.key("enter")
	if h.m.dialog != nil || h.m.entity != "orders" {
		t.Fatalf("entity %q, dialog open %v", h.m.entity, h.m.dialog != nil)
	}
	h.refresh()
	if !slices.ContainsFunc(h.m.entities, func(e broker.Entity) bool { return e.Path == "orders" }) {
		t.Fatalf("the named entity left the list after a refresh: %+v", h.m.entities)
	}
	h.key("l")
	if !strings.Contains(h.screen(), "2 Lock 1") {
		t.Fatalf("no lock taken on the named entity:\n%s", h.screen())
	}
	// Naming a second one keeps both; typing the first again jumps to it.
	h.key(":")
	h.typeText("/exchange/logs/info")
	h.key("enter")
	if h.m.entity != "/exchange/logs/info" || len(h.m.entities) != 2 {
		t.Fatalf("entity %q, list %+v", h.m.entity, h.m.entities)
	}
	h.key(":")
	h.typeText("orders")
	if s := h.screen(); strings.Contains(s, "(new)") {
		t.Fatalf("a named entity is offered as new again:\n%s", s)
	}
	h.key("enter")
	if h.m.entity != "orders" {
		t.Fatalf("entity %q, want orders", h.m.entity)
	}
}
