package model

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
)

// action is what one action of the key map does and where it works: its
// row of the action table, keyed by keymap.Action (keymap.KeyMap.All gives
// the rest of the row: the binding, the help group and the place in the
// one-line help). updateKeybindings reads the columns that say why a key
// does not work now; the main screen runs do (mainScreen.key).
type action struct {
	// needs is the capability of the endpoint it needs (0 for none).
	needs broker.Capability
	// requires returns why the dashboard's state does not allow it ("" when
	// it does), for a need that is not a capability (nil for none).
	requires func(*Model) string
	// changes is true when it changes the broker: refused in read-only mode.
	changes bool
	// noTopic refuses it on a topic, which holds no messages.
	noTopic bool
	// works is the views of the main area it works in.
	works views
	// waits is the panes on which it waits while the row under the cursor
	// just changed by itself (cursorJustMoved), so that it never acts on a
	// row the user did not choose.
	waits paneSet
	// do runs it.
	do func(*Model) tea.Cmd
}

// views is a set of the views of the main area, one bit per overlay.
type views uint8

// The views of the main area, as sets.
const (
	inMain    views = 1 << overMain
	inDetail  views = 1 << overDetail
	inInfo    views = 1 << overInfo
	inClients views = 1 << overClients
	anyView         = inMain | inDetail | inInfo | inClients
	// onMessages is the main screen and the detail view of a message.
	onMessages = inMain | inDetail
	// notInClients is every view but the connected clients view.
	notInClients = inMain | inDetail | inInfo
)

// has reports whether view o is in the set.
func (s views) has(o overlay) bool { return s&(1<<o) != 0 }

// paneSet is a set of panes, one bit per category.
type paneSet uint8

// The panes an action can wait on, as sets.
const (
	everyPane        paneSet = 1<<numPanes - 1
	deadLetteredOnly paneSet = 1 << broker.CategoryDeadLettered
	scheduledOnly    paneSet = 1 << broker.CategoryScheduled
)

// has reports whether the pane of category c is in the set.
func (s paneSet) has(c broker.Category) bool { return s&(1<<c) != 0 }

// actionTable is every action of the key map: what it needs, whether it
// changes the broker, where it works, and what it does. A test checks that
// every action of keymap.KeyMap.All has its row.
var actionTable = map[keymap.Action]action{
	keymap.Up:       {works: anyView, do: func(m *Model) tea.Cmd { return m.main.move(m, -1) }},
	keymap.Down:     {works: anyView, do: func(m *Model) tea.Cmd { return m.main.move(m, 1) }},
	keymap.PageUp:   {works: anyView, do: onMain((*mainScreen).pageUp)},
	keymap.PageDown: {works: anyView, do: onMain((*mainScreen).pageDown)},
	keymap.Top:      {works: anyView, do: onMain((*mainScreen).toTop)},
	keymap.Bottom:   {works: anyView, do: onMain((*mainScreen).toBottom)},

	keymap.NextPane: {works: inMain | inClients, do: func(m *Model) tea.Cmd { return m.main.setFocus(m, (m.focus+1)%numPanes) }},
	keymap.PrevPane: {works: inMain | inClients, do: func(m *Model) tea.Cmd { return m.main.setFocus(m, (m.focus+numPanes-1)%numPanes) }},

	keymap.PaneActive:       {works: inMain, do: focusPane(activePane)},
	keymap.PaneLocked:       {works: inMain, do: focusPane(lockedPane)},
	keymap.PaneDeferred:     {works: inMain, do: focusPane(deferredPane)},
	keymap.PaneScheduled:    {works: inMain, do: focusPane(scheduledPane)},
	keymap.PaneDeadLettered: {works: inMain, do: focusPane(deadLetteredPane)},

	keymap.NextEntity: {works: inMain | inInfo, do: func(m *Model) tea.Cmd { return m.main.stepEntity(m, 1) }},
	keymap.PrevEntity: {works: inMain | inInfo, do: func(m *Model) tea.Cmd { return m.main.stepEntity(m, -1) }},

	keymap.Detail:      {noTopic: true, works: onMessages, do: openDetail},
	keymap.Back:        {works: anyView, do: onMain((*mainScreen).back)},
	keymap.Info:        {requires: needsEntity, works: notInClients, do: openInfo},
	keymap.Clients:     {requires: needsClients, works: inMain | inDetail | inClients, do: openClients},
	keymap.CloseClient: {requires: needsClientCloser, changes: true, works: inClients, do: closeClient},
	keymap.Jump:        {works: notInClients, do: openJump},
	keymap.Zoom:        {works: notInClients, do: onMain((*mainScreen).toggleZoom)},
	keymap.Sidebar:     {works: notInClients, do: onMain((*mainScreen).toggleSidebar)},
	keymap.Log:         {works: notInClients, do: func(m *Model) tea.Cmd { m.log.show(m.common()); return nil }},

	keymap.Lock: {needs: broker.CanPeekLock, changes: true, noTopic: true, works: onMessages,
		do: func(m *Model) tea.Cmd { return m.lock(m.opts.LockCount) }},
	keymap.LockMany: {needs: broker.CanPeekLock, changes: true, noTopic: true, works: onMessages, do: openLockMany},
	keymap.Complete: {needs: broker.CanPeekLock, changes: true, noTopic: true, works: onMessages, waits: everyPane,
		do: func(m *Model) tea.Cmd { return m.settle(&m.keys.Complete, broker.Settlement{Kind: broker.Complete}) }},
	keymap.Abandon: {needs: broker.CanAbandon, changes: true, noTopic: true, works: onMessages, waits: everyPane,
		do: func(m *Model) tea.Cmd { return m.settle(&m.keys.Abandon, broker.Settlement{Kind: broker.Abandon}) }},
	keymap.DeadLetter: {needs: broker.CanDeadLetter, changes: true, noTopic: true, works: onMessages, waits: everyPane,
		do: openDeadLetter},
	keymap.Defer: {needs: broker.CanDefer, changes: true, noTopic: true, works: onMessages, waits: everyPane,
		do: func(m *Model) tea.Cmd { return m.settle(&m.keys.Defer, broker.Settlement{Kind: broker.Defer}) }},
	keymap.Renew:     {needs: broker.CanRenewLock, changes: true, noTopic: true, works: onMessages, waits: everyPane, do: (*Model).renew},
	keymap.AutoRenew: {needs: broker.CanRenewLock, changes: true, noTopic: true, works: onMessages, waits: everyPane, do: (*Model).toggleAutoRenew},
	keymap.Resubmit: {needs: broker.CanPeekLock, changes: true, noTopic: true, works: onMessages, waits: deadLetteredOnly,
		do: (*Model).resubmit},
	keymap.ResubmitAll: {needs: broker.CanPeekLock, changes: true, noTopic: true, works: inMain, do: openResubmitAll},
	keymap.CancelScheduled: {needs: broker.CanSchedule, changes: true, noTopic: true, works: onMessages, waits: scheduledOnly,
		do: (*Model).cancelScheduled},
	keymap.Compose: {changes: true, works: onMessages, do: func(m *Model) tea.Cmd { return openCompose(m, nil) }},
	keymap.Edit:    {changes: true, noTopic: true, works: onMessages, do: (*Model).edit},
	keymap.Purge:   {needs: broker.CanPurge, changes: true, noTopic: true, works: inMain, do: openPurge},

	keymap.Select:    {noTopic: true, works: inMain, do: onMain((*mainScreen).toggleSelect)},
	keymap.SelectAll: {noTopic: true, works: inMain, do: onMain((*mainScreen).selectAll)},
	keymap.Filter:    {needs: broker.CanBrowse, noTopic: true, works: inMain, do: openFilter},
	keymap.Replies:   {needs: broker.CanBrowse, noTopic: true, works: onMessages, do: (*Model).replies},
	keymap.Request:   {needs: broker.CanBrowse, noTopic: true, works: onMessages, do: func(m *Model) tea.Cmd { return m.find.start(m) }},
	keymap.Copy:      {works: onMessages, do: (*Model).copyJSON},
	keymap.Export:    {works: onMessages, do: (*Model).export},
	keymap.Pause:     {works: anyView, do: (*Model).togglePause},
	keymap.Help:      {works: anyView, do: func(m *Model) tea.Cmd { m.help.show(); return nil }},
	keymap.Quit:      {works: anyView, do: (*Model).quit},
}

// focusPane is the action that focuses pane i.
func focusPane(i int) func(*Model) tea.Cmd {
	return func(m *Model) tea.Cmd { return m.main.setFocus(m, i) }
}

// onMain is the action that runs f on the main screen.
func onMain(f func(*mainScreen, *Model) tea.Cmd) func(*Model) tea.Cmd {
	return func(m *Model) tea.Cmd { return f(&m.main, m) }
}

// needsEntity is why no entity's information can be shown.
func needsEntity(m *Model) string {
	if m.entity == "" {
		return "no entity selected"
	}
	return ""
}

// needsClients is why the endpoint's clients cannot be listed.
func needsClients(m *Model) string {
	if _, ok := broker.ClientsOf(m.client); !ok {
		return noClientsReason
	}
	return ""
}

// needsClientCloser is why the endpoint's connections cannot be closed.
func needsClientCloser(m *Model) string {
	if _, ok := broker.ClientCloserOf(m.client); !ok {
		return noClientsReason
	}
	return ""
}

// topicReason is shown when a key that acts on messages is pressed on a
// topic.
const topicReason = "a topic holds no messages: pick one of its subscriptions"

// disabled returns why a does not work now ("" when it does), the first
// that applies: read-only mode, a missing capability or state, a topic
// (topic), the view of the main area on top (view).
func (a *action) disabled(m *Model, topic bool, view overlay) string {
	switch {
	case a.changes && m.readOnly:
		return readOnlyReason
	case !m.caps.Supports(a.needs):
		return m.caps.Reason(a.needs)
	}
	if a.requires != nil {
		if why := a.requires(m); why != "" {
			return why
		}
	}
	if a.noTopic && topic {
		return topicReason
	}
	return a.works.notIn(view, &m.keys)
}

// notIn returns why an action that works in the views s does not work in
// view o ("" when it does): one that works only in views of its own names
// the first, with the key that opens it.
func (s views) notIn(o overlay, k *keymap.KeyMap) string {
	if s.has(o) {
		return ""
	}
	if !s.has(overMain) {
		for v := overDetail; v <= overClients; v++ {
			if s.has(v) {
				return "works in the " + v.title() + " view (" + v.opener(k).Help().Key + ")"
			}
		}
	}
	return "not in the " + o.title() + " view (esc goes back)"
}

// run runs a for the key b, unless the row under the cursor just changed
// by itself on a pane a waits on.
func (a *action) run(m *Model, b *key.Binding) tea.Cmd {
	if a.waits.has(category(m.focus)) {
		if why := m.main.cursorJustMoved(m); why != "" {
			return m.refuse(b, why)
		}
	}
	return a.do(m)
}
