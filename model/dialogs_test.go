package model

import (
	"errors"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The dialog component says what a key did, so the root model follows it:
// in a form, enter moves to the next input and submits on the last one;
// in a confirmation only y and enter submit; esc closes; a refused submit
// keeps the dialog open with its error.
func TestDialogUpdateActs(t *testing.T) {
	form := newDialog(dlgFilter, "form", 80, "A", "B")
	steps := []struct {
		key  string
		want dialogAct
	}{{"x", dialogEdited}, {"enter", dialogKept}, {"enter", dialogSubmitted}, {"shift+tab", dialogKept}, {"esc", dialogClosed}}
	for _, s := range steps {
		if _, got := form.update(keyMsg(s.key)); got != s.want {
			t.Fatalf("form, %s: act %d, want %d", s.key, got, s.want)
		}
	}
	if form.value(0) != "x" || form.focus != 0 {
		t.Fatalf("form: value %q focus %d", form.value(0), form.focus)
	}
	confirm := newDialog(dlgConfirm, "confirm", 80)
	for k, want := range map[string]dialogAct{"x": dialogKept, "y": dialogSubmitted, "enter": dialogSubmitted, "esc": dialogClosed} {
		if _, got := confirm.update(keyMsg(k)); got != want {
			t.Errorf("confirm, %s: act %d, want %d", k, got, want)
		}
	}
	confirm.submit = func(*dialogState) (tea.Cmd, error) { return nil, errors.New("not now") }
	if _, done := confirm.run(); done || confirm.err != "not now" {
		t.Errorf("a refused submit: done %v, error %q", done, confirm.err)
	}
	tabbed := 0
	confirm.onTab = func(*dialogState) { tabbed++ }
	if _, act := confirm.update(keyMsg("tab")); act != dialogKept || tabbed != 1 {
		t.Errorf("tab with onTab: act %d, called %d", act, tabbed)
	}
}
