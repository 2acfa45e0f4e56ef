package keymap

import (
	"sort"

	"charm.land/bubbles/v2/key"
)

// Action names one action of the dashboard: the name Rebind and the config
// file use. The dashboard keys what an action does, and where it works, by
// it (model's action table); All gives its binding, help group and place in
// the one-line help.
type Action string

// The actions, in help order.
const (
	Up               Action = "up"
	Down             Action = "down"
	PageUp           Action = "page_up"
	PageDown         Action = "page_down"
	Top              Action = "top"
	Bottom           Action = "bottom"
	NextPane         Action = "next_pane"
	PrevPane         Action = "prev_pane"
	PaneActive       Action = "pane_active"
	PaneLocked       Action = "pane_locked"
	PaneDeferred     Action = "pane_deferred"
	PaneScheduled    Action = "pane_scheduled"
	PaneDeadLettered Action = "pane_dead_lettered"
	NextEntity       Action = "next_entity"
	PrevEntity       Action = "prev_entity"
	Detail           Action = "detail"
	Back             Action = "back"
	Info             Action = "info"
	Clients          Action = "clients"
	CloseClient      Action = "close_client"
	Jump             Action = "jump"
	Zoom             Action = "zoom"
	Sidebar          Action = "sidebar"
	Log              Action = "log"
	Lock             Action = "lock"
	LockMany         Action = "lock_many"
	Complete         Action = "complete"
	Abandon          Action = "abandon"
	DeadLetter       Action = "dead_letter"
	Defer            Action = "defer"
	Renew            Action = "renew"
	AutoRenew        Action = "auto_renew"
	Resubmit         Action = "resubmit"
	ResubmitAll      Action = "resubmit_all"
	CancelScheduled  Action = "cancel_scheduled"
	Compose          Action = "compose"
	Edit             Action = "edit"
	Purge            Action = "purge"
	Select           Action = "select"
	SelectAll        Action = "select_all"
	Filter           Action = "filter"
	Replies          Action = "replies"
	Request          Action = "request"
	Copy             Action = "copy"
	Export           Action = "export"
	Pause            Action = "pause"
	Help             Action = "help"
	Quit             Action = "quit"
)

// Group is a group of the help screen.
type Group int

// The groups of the help screen, in its order.
const (
	GroupMove Group = iota
	GroupPanes
	GroupMessages
	GroupTools
	numGroups
)

// String returns the group's title on the help screen.
func (g Group) String() string {
	switch g {
	case GroupMove:
		return "Move"
	case GroupPanes:
		return "Panes and views"
	case GroupMessages:
		return "Messages"
	case GroupTools:
		return "Tools"
	}
	return "Other"
}

// Row is one action of the key map: its name, its binding, its group on
// the help screen, and its place in the one-line help at the bottom of the
// screen (Short, from 1; 0 for none).
type Row struct {
	Action  Action
	Binding *key.Binding
	Group   Group
	Short   int
}

// All returns every action of km, one row each, in help order: the table
// that Rebind, the help screen (Groups, FullHelp), the one-line help
// (ShortHelp) and the dashboard's actions are read from. The binding
// pointers point into km.
func (km *KeyMap) All() []Row {
	const (
		move, panes, msgs, tools = GroupMove, GroupPanes, GroupMessages, GroupTools
	)
	return []Row{
		{Up, &km.Up, move, 0},
		{Down, &km.Down, move, 0},
		{PageUp, &km.PageUp, move, 0},
		{PageDown, &km.PageDown, move, 0},
		{Top, &km.Top, move, 0},
		{Bottom, &km.Bottom, move, 0},
		{NextPane, &km.NextPane, panes, 2},
		{PrevPane, &km.PrevPane, panes, 0},
		{PaneActive, &km.Pane[0], panes, 0},
		{PaneLocked, &km.Pane[1], panes, 0},
		{PaneDeferred, &km.Pane[2], panes, 0},
		{PaneScheduled, &km.Pane[3], panes, 0},
		{PaneDeadLettered, &km.Pane[4], panes, 0},
		{NextEntity, &km.NextEntity, move, 0},
		{PrevEntity, &km.PrevEntity, move, 0},
		{Detail, &km.Enter, panes, 3},
		{Back, &km.Back, panes, 0},
		{Info, &km.Info, panes, 0},
		{Clients, &km.Clients, panes, 0},
		{CloseClient, &km.CloseClient, panes, 0},
		{Jump, &km.Jump, panes, 0},
		{Zoom, &km.Zoom, panes, 0},
		{Sidebar, &km.Sidebar, panes, 0},
		{Log, &km.Log, panes, 0},
		{Lock, &km.Lock, msgs, 4},
		{LockMany, &km.LockMany, msgs, 0},
		{Complete, &km.Complete, msgs, 5},
		{Abandon, &km.Abandon, msgs, 0},
		{DeadLetter, &km.DeadLetter, msgs, 6},
		{Defer, &km.Defer, msgs, 0},
		{Renew, &km.Renew, msgs, 0},
		{AutoRenew, &km.AutoRenew, msgs, 0},
		{Resubmit, &km.Resubmit, msgs, 7},
		{ResubmitAll, &km.ResubmitAll, msgs, 0},
		{CancelScheduled, &km.CancelScheduled, msgs, 0},
		{Compose, &km.Compose, msgs, 8},
		{Edit, &km.Edit, msgs, 0},
		{Purge, &km.Purge, msgs, 0},
		{Select, &km.Select, tools, 0},
		{SelectAll, &km.SelectAll, tools, 0},
		{Filter, &km.Filter, tools, 9},
		{Replies, &km.Replies, tools, 0},
		{Request, &km.Request, tools, 0},
		{Copy, &km.Copy, tools, 0},
		{Export, &km.Export, tools, 0},
		{Pause, &km.Pause, tools, 10},
		{Help, &km.Help, tools, 1},
		{Quit, &km.Quit, tools, 11},
	}
}

// Groups returns the bindings grouped for the help screen, indexed by
// Group, each group in help order.
func (km *KeyMap) Groups() [][]*key.Binding {
	out := make([][]*key.Binding, numGroups)
	for _, r := range km.All() {
		out[r.Group] = append(out[r.Group], r.Binding)
	}
	return out
}

// ShortHelp returns the bindings of the one-line help at the bottom of the
// screen (help.KeyMap), in their Short order.
func (km KeyMap) ShortHelp() []key.Binding {
	var rows []Row
	for _, r := range km.All() {
		if r.Short > 0 {
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Short < rows[j].Short })
	out := make([]key.Binding, len(rows))
	for i, r := range rows {
		out[i] = *r.Binding
	}
	return out
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

// ActionNames returns the action names that Rebind accepts, in help order.
func ActionNames() []string {
	var km KeyMap
	all := km.All()
	out := make([]string, len(all))
	for i, r := range all {
		out[i] = string(r.Action)
	}
	return out
}
