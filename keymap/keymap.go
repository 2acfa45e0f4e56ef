// Package keymap holds the dashboard's key bindings as data: one
// key.Binding per action, each with its help text. KeyMap.All is the table
// of actions (name, binding, help group, place in the one-line help) that
// the help screens, Rebind and the dashboard's own action table (keyed by
// Action) are read from. DefaultKeyMap returns the defaults (README.md,
// Keys); Rebind changes them by action name (from the config file) and
// refuses unknown names.
package keymap

import (
	"fmt"

	"charm.land/bubbles/v2/key"
)

// KeyMap is every action of the dashboard with its keys.
type KeyMap struct {
	// Movement inside a pane.
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	// Panes: next, previous, and one binding per pane in broker.Categories
	// order (Active, Locked, Deferred, Scheduled, Dead-lettered).
	NextPane, PrevPane key.Binding
	Pane               [5]key.Binding
	// Entities: the next and previous queue, topic or subscription.
	NextEntity, PrevEntity key.Binding
	// Enter opens the detail view; Back leaves it (and closes dialogs,
	// clears a filter, returns from a jump, cancels bulk work).
	Enter, Back key.Binding
	// Info opens the selected entity's information view: its settings,
	// counts, times, user metadata, and a topic's subscriptions or a
	// subscription's rules.
	Info key.Binding
	// Clients opens the connected clients view (the embedded broker's
	// AMQP listener); in it, CloseClient closes the selected connection
	// (NextPane and PrevPane select one).
	Clients, CloseClient key.Binding
	// Jump picks an entity by typing part of its name (fuzzy); Zoom gives
	// the focused pane the whole screen and back; Sidebar hides or shows
	// the entity list; Log opens the message log, every status and error
	// line kept whole.
	Jump, Zoom, Sidebar, Log key.Binding

	// Message operations.
	Lock, LockMany, Complete, Abandon, DeadLetter, Defer     key.Binding
	Renew, AutoRenew, Resubmit, ResubmitAll, CancelScheduled key.Binding
	Compose, Edit, Purge                                     key.Binding

	// Tools. Replies jumps from a request to its replies; Request looks
	// for the request of a reply (the message whose MessageId is its
	// CorrelationId).
	Select, SelectAll, Filter, Replies, Request, Copy, Export key.Binding
	Pause, Help, Quit                                         key.Binding
}

// DefaultKeyMap returns the default bindings (README.md, Keys), plus
// the few extra actions peeklock adds (entity switching, entity info, lock
// many, resubmit a whole dead-letter queue, cancel a scheduled message,
// select all, jump to replies, find the request of a reply).
func DefaultKeyMap() KeyMap {
	b := func(desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKeys(keys), desc))
	}
	return KeyMap{
		Up:       b("up", "up", "k"),
		Down:     b("down", "down", "j"),
		PageUp:   b("page up", "pgup"),
		PageDown: b("page down", "pgdown"),
		Top:      b("first", "g", "home"),
		Bottom:   b("last", "G", "end"),

		NextPane: b("next pane", "tab"),
		PrevPane: b("previous pane", "shift+tab"),
		Pane: [5]key.Binding{
			b("Active pane", "1"),
			b("Locked pane", "2"),
			b("Deferred pane", "3"),
			b("Scheduled pane", "4"),
			b("Dead-lettered pane", "5"),
		},
		NextEntity:  b("next entity", "]"),
		PrevEntity:  b("previous entity", "["),
		Enter:       b("details", "enter"),
		Back:        b("back / cancel", "esc"),
		Info:        b("entity info", "i"),
		Clients:     b("connected clients", "C"),
		CloseClient: b("close the selected connection", "X"),
		Jump:        b("jump to an entity", ":"),
		Zoom:        b("zoom the pane / back", "z"),
		Sidebar:     b("hide / show the entity list", "b"),
		Log:         b("message log", "m"),

		Lock:            b("lock next", "l"),
		LockMany:        b("lock next N", "L"),
		Complete:        b("complete", "c"),
		Abandon:         b("abandon", "a"),
		DeadLetter:      b("dead-letter", "d"),
		Defer:           b("defer", "f"),
		Renew:           b("renew lock or session lock", "r"),
		AutoRenew:       b("auto-renew on/off", "R"),
		Resubmit:        b("resubmit from DLQ", "s"),
		ResubmitAll:     b("resubmit whole DLQ", "S"),
		CancelScheduled: b("cancel scheduled", "delete"),
		Compose:         b("compose and send", "n"),
		Edit:            b("edit a copy and send", "e"),
		Purge:           b("purge", "P"),

		Select:    b("select", "space"),
		SelectAll: b("select all pages / clear", "*"),
		Filter:    b("filter", "/"),
		Replies:   b("replies / back", "o"),
		Request:   b("find the request of a reply", "O"),
		Copy:      b("copy as JSON", "y"),
		Export:    b("export JSON lines", "x"),
		Pause:     b("pause / resume", "p"),
		Help:      b("help", "?"),
		Quit:      b("quit", "q", "ctrl+c"),
	}
}

// helpKeys renders keys for the help screen: "↑/k", "pgup", "q/ctrl+c".
func helpKeys(keys []string) string {
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += "/"
		}
		s += displayKey(k)
	}
	return s
}

func displayKey(k string) string {
	switch k {
	case "up":
		return "↑"
	case "down":
		return "↓"
	case "left":
		return "←"
	case "right":
		return "→"
	case "pgdown":
		return "pgdn"
	}
	return k
}

// Pressed reports whether the key k is one of b's keys, whether or not b is
// enabled: the dashboard uses it to explain why a disabled key does nothing.
func Pressed(k fmt.Stringer, b key.Binding) bool {
	s := k.String()
	for _, v := range b.Keys() {
		if v == s {
			return true
		}
	}
	return false
}

// Scroll moves *top, the first line shown of a scrolling view of page lines
// whose top can go from 0 to maxTop, by the movement key k is (up, down,
// page up, page down, first, last), and reports whether k was one of them.
func (km *KeyMap) Scroll(k fmt.Stringer, top *int, maxTop, page int) bool {
	switch {
	case Pressed(k, km.Up):
		*top = max(0, *top-1)
	case Pressed(k, km.Down):
		*top = min(maxTop, *top+1)
	case Pressed(k, km.PageUp):
		*top = max(0, *top-page)
	case Pressed(k, km.PageDown):
		*top = min(maxTop, *top+page)
	case Pressed(k, km.Top):
		*top = 0
	case Pressed(k, km.Bottom):
		*top = maxTop
	default:
		return false
	}
	return true
}
