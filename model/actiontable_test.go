package model

import (
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
)

// TestActionTableCoversKeyMap checks that every action of the key map has
// one row of the action table, that works somewhere and does something,
// and that the table has no row the key map does not know.
func TestActionTableCoversKeyMap(t *testing.T) {
	km := keymap.DefaultKeyMap()
	all := km.All()
	for _, r := range all {
		a, ok := actionTable[r.Action]
		switch {
		case !ok:
			t.Errorf("action %q has no row in actionTable", r.Action)
		case a.do == nil:
			t.Errorf("action %q does nothing", r.Action)
		case a.works == 0:
			t.Errorf("action %q works in no view", r.Action)
		}
	}
	if len(actionTable) != len(all) {
		known := map[keymap.Action]bool{}
		for _, r := range all {
			known[r.Action] = true
		}
		for name := range actionTable {
			if !known[name] {
				t.Errorf("actionTable has a row for %q, which the key map does not have", name)
			}
		}
	}
}

// TestPaneIndexesFollowCategories checks that pane i shows category i, as
// the named pane indexes assume.
func TestPaneIndexesFollowCategories(t *testing.T) {
	for i, c := range broker.Categories {
		if int(c) != i {
			t.Fatalf("broker.Categories[%d] is %s (%d): the pane indexes are wrong", i, c, c)
		}
	}
	if category(lockedPane) != broker.CategoryLocked || category(deadLetteredPane) != broker.CategoryDeadLettered {
		t.Fatal("the named pane indexes do not name their panes")
	}
}

// TestDisabledReasonOrder checks which reason wins when several apply:
// read-only mode, then a missing capability, then a missing state, then a
// topic, then the view.
func TestDisabledReasonOrder(t *testing.T) {
	m := &Model{keys: keymap.DefaultKeyMap(), caps: broker.Capabilities{Has: broker.CanBrowse,
		Why: map[broker.Capability]string{broker.CanPurge: "no purge here"}}}
	missing := func(*Model) string { return "missing state" }
	a := action{needs: broker.CanPurge, requires: missing, changes: true, noTopic: true, works: inMain}
	steps := []struct {
		change func()
		want   string
	}{
		{func() { m.readOnly = true }, readOnlyReason},
		{func() { m.readOnly = false }, "no purge here"},
		{func() { a.needs = broker.CanBrowse }, "missing state"},
		{func() { a.requires = nil }, topicReason},
		{func() { a.noTopic = false }, "not in the detail view (esc goes back)"},
		{func() { a.works |= inDetail }, ""},
	}
	for _, s := range steps {
		s.change()
		if got := a.disabled(m, true, overDetail); got != s.want {
			t.Errorf("got %q, want %q", got, s.want)
		}
	}
	clientsOnly := action{works: inClients}
	for _, v := range []overlay{overMain, overDetail, overInfo} {
		if got, want := clientsOnly.disabled(m, false, v), "works in the connected clients view (C)"; got != want {
			t.Errorf("in %s: got %q, want %q", v, got, want)
		}
	}
	if got := clientsOnly.disabled(m, false, overClients); got != "" {
		t.Errorf("in the clients view: %q", got)
	}
}
