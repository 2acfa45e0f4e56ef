// Package keymap holds the dashboard's key bindings as data: one
// key.Binding per action, each with its help text, grouped for the help
// screen. DefaultKeyMap returns the defaults (README.md, Keys); Rebind changes
// them by action name (from the config file) and refuses unknown names.
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

// Named is one binding with the action name that Rebind and the config file
// use.
type Named struct {
	Name    string
	Binding *key.Binding
}

// All returns every binding of km with its action name, in help order.
// The pointers point into km.
func (km *KeyMap) All() []Named {
	return []Named{
		{"up", &km.Up}, {"down", &km.Down}, {"page_up", &km.PageUp}, {"page_down", &km.PageDown},
		{"top", &km.Top}, {"bottom", &km.Bottom},
		{"next_pane", &km.NextPane}, {"prev_pane", &km.PrevPane},
		{"pane_active", &km.Pane[0]}, {"pane_locked", &km.Pane[1]}, {"pane_deferred", &km.Pane[2]},
		{"pane_scheduled", &km.Pane[3]}, {"pane_dead_lettered", &km.Pane[4]},
		{"next_entity", &km.NextEntity}, {"prev_entity", &km.PrevEntity},
		{"detail", &km.Enter}, {"back", &km.Back}, {"info", &km.Info}, {"clients", &km.Clients}, {"close_client", &km.CloseClient},
		{"jump", &km.Jump}, {"zoom", &km.Zoom}, {"sidebar", &km.Sidebar}, {"log", &km.Log},
		{"lock", &km.Lock}, {"lock_many", &km.LockMany}, {"complete", &km.Complete},
		{"abandon", &km.Abandon}, {"dead_letter", &km.DeadLetter}, {"defer", &km.Defer},
		{"renew", &km.Renew}, {"auto_renew", &km.AutoRenew}, {"resubmit", &km.Resubmit},
		{"resubmit_all", &km.ResubmitAll}, {"cancel_scheduled", &km.CancelScheduled},
		{"compose", &km.Compose}, {"edit", &km.Edit}, {"purge", &km.Purge},
		{"select", &km.Select}, {"select_all", &km.SelectAll}, {"filter", &km.Filter},
		{"replies", &km.Replies}, {"request", &km.Request}, {"copy", &km.Copy}, {"export", &km.Export},
		{"pause", &km.Pause}, {"help", &km.Help}, {"quit", &km.Quit},
	}
}

// Groups returns the bindings grouped for the help screen: movement, panes
// and views, message operations, tools.
func (km *KeyMap) Groups() [][]*key.Binding {
	return [][]*key.Binding{
		{&km.Up, &km.Down, &km.PageUp, &km.PageDown, &km.Top, &km.Bottom, &km.NextEntity, &km.PrevEntity},
		{&km.NextPane, &km.PrevPane, &km.Pane[0], &km.Pane[1], &km.Pane[2], &km.Pane[3], &km.Pane[4], &km.Enter, &km.Back, &km.Info, &km.Clients,
			&km.CloseClient, &km.Jump, &km.Zoom, &km.Sidebar, &km.Log},
		{&km.Lock, &km.LockMany, &km.Complete, &km.Abandon, &km.DeadLetter, &km.Defer, &km.Renew, &km.AutoRenew,
			&km.Resubmit, &km.ResubmitAll, &km.CancelScheduled, &km.Compose, &km.Edit, &km.Purge},
		{&km.Select, &km.SelectAll, &km.Filter, &km.Replies, &km.Request, &km.Copy, &km.Export, &km.Pause, &km.Help, &km.Quit},
	}
}

// ShortHelp returns the bindings of the one-line help at the bottom of the
// screen (help.KeyMap).
func (km KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{km.Help, km.NextPane, km.Enter, km.Lock, km.Complete, km.DeadLetter, km.Resubmit,
		km.Compose, km.Filter, km.Pause, km.Quit}
}

// FullHelp returns every binding grouped in columns (help.KeyMap).
func (km KeyMap) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	for _, g := range km.Groups() {
		col := make([]key.Binding, len(g))
		for i, b := range g {
			col[i] = *b
		}
		out = append(out, col)
	}
	return out
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
