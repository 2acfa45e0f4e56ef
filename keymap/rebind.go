package keymap

import (
	"fmt"
	"sort"
	"strings"
)

// RebindError is the error of Rebind: an unknown action name or an unusable
// key list.
type RebindError struct {
	// Action is the action name as given.
	Action string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns "keymap: action "x": reason".
func (e *RebindError) Error() string {
	return fmt.Sprintf("keymap: action %q: %s", e.Action, e.Reason)
}

// normalize makes "dead-letter", "Dead_Letter" and "deadletter" one name.
func normalize(name string) string {
	return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(name)))
}

// Rebind replaces the keys of the named actions (names as in All, with "-"
// or "_" as the word separator, any case). Every name must be known and
// every key list non-empty; on error km is left unchanged. The help text
// follows the new keys.
func (km *KeyMap) Rebind(bindings map[string][]string) error {
	byName := make(map[string]Named)
	for _, n := range km.All() {
		byName[normalize(n.Name)] = n
	}
	names := make([]string, 0, len(bindings))
	for name := range bindings {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic errors
	for _, name := range names {
		if _, ok := byName[normalize(name)]; !ok {
			return &RebindError{Action: name, Reason: "unknown action (known: " + strings.Join(ActionNames(), ", ") + ")"}
		}
		keys := bindings[name]
		if len(keys) == 0 {
			return &RebindError{Action: name, Reason: "no keys given"}
		}
		for _, k := range keys {
			if strings.TrimSpace(k) == "" {
				return &RebindError{Action: name, Reason: "empty key"}
			}
		}
	}
	for _, name := range names {
		n := byName[normalize(name)]
		keys := append([]string(nil), bindings[name]...)
		n.Binding.SetKeys(keys...)
		n.Binding.SetHelp(helpKeys(keys), n.Binding.Help().Desc)
	}
	return nil
}

// ActionNames returns the action names that Rebind accepts, in help order.
func ActionNames() []string {
	km := DefaultKeyMap()
	all := km.All()
	out := make([]string, len(all))
	for i, n := range all {
		out[i] = n.Name
	}
	return out
}
