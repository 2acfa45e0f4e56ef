package model

import (
	"charm.land/bubbles/v2/key"
)

// readOnlyReason is shown when a changing key is pressed in read-only mode.
const readOnlyReason = "read-only mode: this would change the broker"

// updateKeybindings enables and disables bindings from the state, in one
// place, and records why each disabled one is disabled (action.disabled
// reads the action table: read-only mode, missing capabilities of the
// endpoint, a topic, the view). Help shows the reasons; pressing a
// disabled key shows its reason in the status bar.
func (m *Model) updateKeybindings() {
	if m.why == nil {
		m.why = make(map[*key.Binding]string)
	}
	clear(m.why)
	topic, view := m.isTopic(), m.stack().area()
	for _, r := range m.keys.All() {
		a := actionTable[r.Action]
		why := a.disabled(m, topic, view)
		if why != "" {
			m.why[r.Binding] = why
		}
		r.Binding.SetEnabled(why == "")
	}
}

// reason returns why b is disabled ("" when it works).
func (m *Model) reason(b *key.Binding) string { return m.why[b] }
