package keymap

import (
	"fmt"
	"reflect"
	"testing"

	"charm.land/bubbles/v2/key"
)

// TestEveryBindingHasOneRow walks the KeyMap struct (arrays and nested
// structs too): every key.Binding in it must have exactly one row in All,
// every row must point into the key map, and no action name is used twice.
func TestEveryBindingHasOneRow(t *testing.T) {
	km := DefaultKeyMap()
	rows := map[*key.Binding]int{}
	names := map[Action]bool{}
	for _, r := range km.All() {
		rows[r.Binding]++
		if names[r.Action] {
			t.Errorf("action %q has two rows", r.Action)
		}
		names[r.Action] = true
	}
	fields := bindingFields(reflect.ValueOf(&km).Elem(), "KeyMap")
	if len(fields) < 40 {
		t.Fatalf("the walk found %d bindings: it does not see the key map", len(fields))
	}
	for path, b := range fields {
		switch rows[b] {
		case 1:
		case 0:
			t.Errorf("%s has no row in KeyMap.All: it cannot be rebound, helped or dispatched", path)
		default:
			t.Errorf("%s has %d rows in KeyMap.All", path, rows[b])
		}
		delete(rows, b)
	}
	for b := range rows {
		t.Errorf("a row of KeyMap.All (%q) points outside the key map", b.Help().Desc)
	}
}

// bindingFields returns the address of every key.Binding inside v (an
// addressable value), by its path ("KeyMap.Pane[4]"), exported or not.
func bindingFields(v reflect.Value, path string) map[string]*key.Binding {
	out := map[string]*key.Binding{}
	if v.Type() == reflect.TypeFor[key.Binding]() {
		out[path] = (*key.Binding)(v.Addr().UnsafePointer())
		return out
	}
	add := func(m map[string]*key.Binding) {
		for p, b := range m {
			out[p] = b
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			add(bindingFields(v.Field(i), path+"."+v.Type().Field(i).Name))
		}
	case reflect.Array, reflect.Slice:
		for i := range v.Len() {
			add(bindingFields(v.Index(i), fmt.Sprintf("%s[%d]", path, i)))
		}
	}
	return out
}

// TestShortHelpOrder checks that the one-line help places are 1..n, each
// used once, so that ShortHelp has one order.
func TestShortHelpOrder(t *testing.T) {
	km := DefaultKeyMap()
	seen := map[int]Action{}
	for _, r := range km.All() {
		if r.Short == 0 {
			continue
		}
		if other, ok := seen[r.Short]; ok {
			t.Errorf("%s and %s both take place %d of the one-line help", other, r.Action, r.Short)
		}
		seen[r.Short] = r.Action
	}
	for i := 1; i <= len(seen); i++ {
		if _, ok := seen[i]; !ok {
			t.Errorf("no action takes place %d of the one-line help (%d places)", i, len(seen))
		}
	}
	if got := len(km.ShortHelp()); got != len(seen) {
		t.Errorf("ShortHelp has %d bindings, want %d", got, len(seen))
	}
}
