package model

import (
	"charm.land/bubbles/v2/key"
	"github.com/peeklock/peeklock/keymap"
)

// overlay names one view of the dashboard that can lie over the main
// screen (the panes). The open ones form a stack, in a fixed order of
// priority: the first open one in the order below is on top, takes the
// keys and is drawn last. Keys, the view, the key bindings and the mouse
// all ask the stack (top, areaView), so the order is written once, here.
//
// The progress boxes of bulk work and of the search for a request float
// over every view but never take keys: they are not part of the stack.
type overlay int

const (
	// overMain is the main screen: the panes, under every view.
	overMain overlay = iota
	// overDetail is the detail view of one message, in the main area.
	overDetail
	// overInfo is the entity information view, in the main area, over
	// the detail view.
	overInfo
	// overClients is the connected clients view, in the main area, over
	// the information and detail views.
	overClients
	// overHelp is the help screen, over the whole screen.
	overHelp
	// overLog is the message log, over the whole screen.
	overLog
	// overDialog is a dialog box (prompt, confirmation, jump), over
	// everything.
	overDialog
)

// String names the overlay (for tests and errors).
func (o overlay) String() string {
	switch o {
	case overDetail:
		return "detail"
	case overInfo:
		return "info"
	case overClients:
		return "clients"
	case overHelp:
		return "help"
	case overLog:
		return "log"
	case overDialog:
		return "dialog"
	}
	return "main"
}

// title names a view of the main area in the reasons a key does not work
// in it, or works only in it.
func (o overlay) title() string {
	switch o {
	case overInfo:
		return "entity info"
	case overClients:
		return "connected clients"
	}
	return o.String()
}

// opener returns the binding of the key that opens a view of the main
// area.
func (o overlay) opener(k *keymap.KeyMap) *key.Binding {
	switch o {
	case overInfo:
		return &k.Info
	case overClients:
		return &k.Clients
	}
	return &k.Enter
}

// modal reports whether o keeps every key and click for itself: the
// views of the main area let the main actions through (most of them
// disabled, see updateKeybindings), the modal ones do not.
func (o overlay) modal() bool { return o >= overHelp }

// isOpen reports whether overlay o is open.
func (m *Model) isOpen(o overlay) bool {
	switch o {
	case overDetail:
		return m.detail != nil
	case overInfo:
		return m.entInfo != nil
	case overClients:
		return m.clients != nil
	case overHelp:
		return m.help.open
	case overLog:
		return m.log.open
	case overDialog:
		return m.dialog != nil
	}
	return true
}

// stack returns the open overlays, top first; the main screen is always
// last.
func (m *Model) stack() []overlay {
	var s []overlay
	for o := overDialog; o > overMain; o-- {
		if m.isOpen(o) {
			s = append(s, o)
		}
	}
	return append(s, overMain)
}

// top returns the overlay that has the keys and is drawn on top.
func (m *Model) top() overlay { return m.stack()[0] }

// areaView returns the view drawn in the main area (under the help
// screen, the log and dialogs): the topmost open view of the main area,
// or overMain for the panes.
func (m *Model) areaView() overlay {
	for _, o := range m.stack() {
		if !o.modal() {
			return o
		}
	}
	return overMain
}
