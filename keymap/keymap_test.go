package keymap

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestDefaultsMatchDesign checks the default keys (the Keys section of
// README.md),
// which are part of the interface.
func TestDefaultsMatchDesign(t *testing.T) {
	km := DefaultKeyMap()
	want := map[string][]string{
		"up": {"up", "k"}, "down": {"down", "j"}, "page_up": {"pgup"}, "page_down": {"pgdown"},
		"top": {"g", "home"}, "bottom": {"G", "end"}, "next_pane": {"tab"}, "prev_pane": {"shift+tab"},
		"pane_active": {"1"}, "pane_locked": {"2"}, "pane_deferred": {"3"}, "pane_scheduled": {"4"},
		"pane_dead_lettered": {"5"}, "detail": {"enter"}, "back": {"esc"}, "info": {"i"}, "clients": {"C"}, "lock": {"l"},
		"complete": {"c"}, "abandon": {"a"}, "dead_letter": {"d"}, "defer": {"f"}, "renew": {"r"},
		"auto_renew": {"R"}, "resubmit": {"s"}, "compose": {"n"}, "edit": {"e"}, "purge": {"P"},
		"select": {"space"}, "filter": {"/"}, "copy": {"y"}, "export": {"x"}, "pause": {"p"},
		"help": {"?"}, "quit": {"q", "ctrl+c"}, "jump": {":"}, "zoom": {"z"}, "sidebar": {"b"}, "log": {"m"},
	}
	got := map[string][]string{}
	for _, n := range km.All() {
		got[string(n.Action)] = n.Binding.Keys()
		if n.Binding.Help().Desc == "" {
			t.Errorf("%s has no help text", n.Action)
		}
	}
	for name, keys := range want {
		if strings.Join(got[name], ",") != strings.Join(keys, ",") {
			t.Errorf("%s: keys %v, want %v", name, got[name], keys)
		}
	}
}

func TestNoKeyIsBoundTwice(t *testing.T) {
	km := DefaultKeyMap()
	seen := map[string]string{}
	for _, n := range km.All() {
		for _, k := range n.Binding.Keys() {
			if other, ok := seen[k]; ok {
				t.Errorf("key %q is bound to %s and %s", k, other, n.Action)
			}
			seen[k] = string(n.Action)
		}
	}
}

func TestRebind(t *testing.T) {
	km := DefaultKeyMap()
	if err := km.Rebind(map[string][]string{"complete": {"K", "ctrl+d"}, "Dead-Letter": {"D"}}); err != nil {
		t.Fatal(err)
	}
	if got := km.Complete.Keys(); strings.Join(got, ",") != "K,ctrl+d" || km.Complete.Help().Key != "K/ctrl+d" {
		t.Fatalf("complete: %v %q", got, km.Complete.Help().Key)
	}
	if got := km.DeadLetter.Keys(); len(got) != 1 || got[0] != "D" {
		t.Fatalf("dead-letter: %v", got)
	}
	if !Pressed(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}, km.Complete) {
		t.Fatal("ctrl+d does not press complete")
	}
}

func TestRebindRefusesUnknownAndEmpty(t *testing.T) {
	km := DefaultKeyMap()
	err := km.Rebind(map[string][]string{"complete": {"C"}, "explode": {"x"}})
	var re *RebindError
	if !errors.As(err, &re) || re.Action != "explode" || !strings.Contains(err.Error(), "unknown action") {
		t.Fatalf("got %v", err)
	}
	if km.Complete.Keys()[0] != "c" {
		t.Fatal("a failed rebind changed the key map")
	}
	if err := km.Rebind(map[string][]string{"quit": {}}); !errors.As(err, &re) || re.Reason != "no keys given" {
		t.Fatalf("got %v", err)
	}
	if err := km.Rebind(map[string][]string{"quit": {" "}}); !errors.As(err, &re) || re.Reason != "empty key" {
		t.Fatalf("got %v", err)
	}
}

// TestRebindRefusesConflicts refuses a key given to two actions (it would
// do only one of them), naming both, and leaves the key map unchanged; a
// swap of two actions' keys is fine.
func TestRebindRefusesConflicts(t *testing.T) {
	km := DefaultKeyMap()
	for _, tc := range []struct {
		bindings map[string][]string
		action   string
		want     string
	}{
		{map[string][]string{"complete": {"q"}}, "complete", `key "q" is also bound to "quit"`},
		{map[string][]string{"complete": {"x"}, "Dead-Letter": {"x"}}, "complete", `key "x" is also bound to "Dead-Letter"`},
		{map[string][]string{"up": {"up", "j"}}, "up", `key "j" is also bound to "down"`},
	} {
		err := km.Rebind(tc.bindings)
		var re *RebindError
		if !errors.As(err, &re) || re.Action != tc.action || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want action %q and %q", tc.bindings, err, tc.action, tc.want)
		}
	}
	if km.Complete.Keys()[0] != "c" || km.Up.Keys()[1] != "k" {
		t.Fatal("a refused rebind changed the key map")
	}
	if err := km.Rebind(map[string][]string{"complete": {"a"}, "abandon": {"c"}}); err != nil {
		t.Fatalf("swapping two actions' keys: %v", err)
	}
}

func TestPressedIgnoresEnabled(t *testing.T) {
	km := DefaultKeyMap()
	km.Complete.SetEnabled(false)
	if !Pressed(tea.KeyPressMsg{Code: 'c', Text: "c"}, km.Complete) {
		t.Fatal("a disabled binding must still be recognised to explain itself")
	}
	if Pressed(tea.KeyPressMsg{Code: 'x', Text: "x"}, km.Complete) {
		t.Fatal("x is not complete")
	}
}

// TestRequestKey checks the key that finds a reply's request: O by default
// (o keeps jumping to replies), rebindable by the name "request".
func TestRequestKey(t *testing.T) {
	km := DefaultKeyMap()
	if got := km.Request.Keys(); strings.Join(got, ",") != "O" || km.Replies.Keys()[0] != "o" {
		t.Fatalf("request %v, replies %v", got, km.Replies.Keys())
	}
	if err := km.Rebind(map[string][]string{"request": {"ctrl+o"}}); err != nil {
		t.Fatal(err)
	}
	if got := km.Request.Keys(); strings.Join(got, ",") != "ctrl+o" || km.Request.Help().Key != "ctrl+o" {
		t.Fatalf("rebound: %v %q", got, km.Request.Help().Key)
	}
}

// The entity info key is rebindable like the other actions, by its action
// name, and its help follows.
func TestRebindInfo(t *testing.T) {
	km := DefaultKeyMap()
	if km.Info.Help().Key != "i" || km.Info.Help().Desc != "entity info" {
		t.Fatalf("info help: %+v", km.Info.Help())
	}
	if err := km.Rebind(map[string][]string{"info": {"I", "f2"}}); err != nil {
		t.Fatal(err)
	}
	if got := km.Info.Keys(); strings.Join(got, ",") != "I,f2" || km.Info.Help().Key != "I/f2" {
		t.Fatalf("info: %v %q", got, km.Info.Help().Key)
	}
}

// TestScroll moves a view's top line by each movement key and keeps it
// within 0..maxTop; other keys leave it and report false.
func TestScroll(t *testing.T) {
	km := DefaultKeyMap()
	top := 5
	for _, step := range []struct {
		key  tea.Key
		want int
	}{
		{tea.Key{Code: tea.KeyDown}, 6}, {tea.Key{Code: 'k', Text: "k"}, 5}, {tea.Key{Code: tea.KeyPgDown}, 15},
		{tea.Key{Code: tea.KeyPgDown}, 20}, {tea.Key{Code: tea.KeyDown}, 20}, {tea.Key{Code: tea.KeyPgUp}, 10},
		{tea.Key{Code: 'g', Text: "g"}, 0}, {tea.Key{Code: tea.KeyUp}, 0}, {tea.Key{Code: 'G', Text: "G"}, 20},
	} {
		if !km.Scroll(tea.KeyPressMsg(step.key), &top, 20, 10) || top != step.want {
			t.Fatalf("after %s: top %d, want %d", tea.KeyPressMsg(step.key), top, step.want)
		}
	}
	if km.Scroll(tea.KeyPressMsg(tea.Key{Code: 'c', Text: "c"}), &top, 20, 10) || top != 20 {
		t.Fatalf("c scrolled: top %d", top)
	}
}
