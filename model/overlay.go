package model

import (
	"fmt"
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// view is one view of the dashboard: the main screen (the panes), or one
// that opens over it. The open views form a stack (Model.stack), top
// first; keys, clicks, the mouse wheel and the frame go down it in one
// loop each, and the key bindings follow the view of the main area on top.
// A new view is a type that implements view, in its own file, and one line
// in stack.
//
// A view's methods take the root model: beside its own state, a view shows
// and acts on the root's (the key map, the layout, the locks held, the
// broker calls). Methods other than isOpen are called only while the view
// is open.
type view interface {
	// id names the view: its name in errors and tests, and in the action
	// table's sets of the views of the main area (action.works).
	id() overlay
	// isOpen reports whether the view is open; a closed view takes nothing
	// and draws nothing.
	isOpen() bool
	// modal reports whether the view keeps every key and click for itself
	// (help, the message log, dialogs). The other views lie in the main
	// area and let the keys they do not take through to the main actions,
	// which the key bindings enable for the topmost of them
	// (updateKeybindings reads action.works).
	modal() bool
	// key takes a key press; taken false hands it to the view below.
	key(m *Model, msg tea.KeyPressMsg) (cmd tea.Cmd, taken bool)
	// click takes a left click at ms; taken false hands it to the view
	// below.
	click(m *Model, ms tea.Mouse) (cmd tea.Cmd, taken bool)
	// wheel takes a turn of the mouse wheel by delta lines at ms; taken
	// false hands it to the view below.
	wheel(m *Model, ms tea.Mouse, delta int) (cmd tea.Cmd, taken bool)
	// frame draws the view into the screen s of this frame (c gives its
	// size and styles), over what the views under it drew.
	frame(m *Model, c *ui.Common, s *ui.Screen)
	// close closes the view (a click on a tab closes every view of the
	// main area); the main screen stays.
	close(m *Model)
}

// overlay names a view of the stack (view.id).
//
// The progress boxes of bulk work and of the search for a request float
// over every view but never take keys: they are drawn by the main screen
// and are not part of the stack (esc stops the search before a view of the
// main area takes it, see onKey).
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
	case overMain:
		return "main"
	}
	return fmt.Sprintf("view %d", int(o))
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

// views returns every view, open or not, top first, in a fixed order of
// priority: the views added above the dashboard's own (Model.above), a
// dialog, the message log, the help screen, the connected clients, the
// entity information, the detail view, and the main screen, always open
// and always last. A new view is one line here.
func (m *Model) views() []view {
	return append(slices.Clip(m.above), m.dialog, &m.log, &m.help, m.clients, m.entInfo, m.detail, &m.main)
}

// stack returns the open views, top first, the main screen last. The views
// of the main area share it: the topmost covers the others, which are left
// out of the stack until it closes, so the keys it does not take go to the
// main screen.
func (m *Model) stack() viewStack {
	all := m.views()
	s := viewStack(all[:0]) // the open ones, in place: views returns a new slice
	area := false
	for i, v := range all {
		switch {
		case !v.isOpen():
		case v.modal() || i == len(all)-1:
			s = append(s, v)
		case !area:
			s, area = append(s, v), true
		}
	}
	return s
}

// viewStack is the open views, top first, the main screen last.
type viewStack []view

// top names the view that has the keys and is drawn on top.
func (s viewStack) top() overlay { return s[0].id() }

// area names the view drawn in the main area (under the help screen, the
// log and dialogs): the first that is not modal, the main screen when no
// other is open.
func (s viewStack) area() overlay {
	for _, v := range s {
		if !v.modal() {
			return v.id()
		}
	}
	return overMain
}

// ids names the views of the stack, top first.
func (s viewStack) ids() []overlay {
	ids := make([]overlay, len(s))
	for i, v := range s {
		ids[i] = v.id()
	}
	return ids
}

// inMainArea reports whether the point x, y lies in the main area, which
// the views of the main area cover: they take the clicks there.
func inMainArea(m *Model, x, y int) bool { return m.layout().Main.Contains(x, y) }
