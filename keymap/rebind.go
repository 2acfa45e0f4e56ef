package keymap

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
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
	byName := make(map[string]Row)
	for _, n := range km.All() {
		byName[normalize(string(n.Action))] = n
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
	if err := conflicts(km.All(), byName, bindings, names); err != nil {
		return err
	}
	for _, name := range names {
		n := byName[normalize(name)]
		keys := append([]string(nil), bindings[name]...)
		n.Binding.SetKeys(keys...)
		n.Binding.SetHelp(helpKeys(keys), n.Binding.Help().Desc)
	}
	return nil
}

// conflicts refuses bindings that give one key to two actions (the key
// would do only one of them), naming both; names are the sorted action
// names of bindings as given.
func conflicts(all []Row, byName map[string]Row, bindings map[string][]string, names []string) error {
	given := make(map[*key.Binding]string, len(names)) // binding -> name as given
	for _, name := range names {
		given[byName[normalize(name)].Binding] = name
	}
	owner := make(map[string]string) // key -> action name
	check := func(action string, keys []string) error {
		for _, k := range keys {
			if other, taken := owner[k]; taken && other != action {
				a, b := action, other
				if _, ok := bindings[a]; !ok {
					a, b = b, a // name the action the config rebinds
				}
				return &RebindError{Action: a, Reason: fmt.Sprintf("key %q is also bound to %q; give that action other keys too", k, actionName(b, given, byName))}
			}
			owner[k] = action
		}
		return nil
	}
	// The rebound actions first, so that a clash names them.
	for _, name := range names {
		if err := check(name, bindings[name]); err != nil {
			return err
		}
	}
	for _, n := range all {
		if _, rebound := given[n.Binding]; rebound {
			continue
		}
		if err := check(string(n.Action), n.Binding.Keys()); err != nil {
			return err
		}
	}
	return nil
}

// actionName returns an action's name as the config gave it, or its
// canonical name.
func actionName(name string, given map[*key.Binding]string, byName map[string]Row) string {
	if n, ok := byName[normalize(name)]; ok {
		if g, ok := given[n.Binding]; ok {
			return g
		}
		return string(n.Action)
	}
	return name
}
