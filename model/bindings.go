package model

import (
	"charm.land/bubbles/v2/key"
	"github.com/peeklock/peeklock/broker"
)

// readOnlyReason is shown when a changing key is pressed in read-only mode.
const readOnlyReason = "read-only mode: this would change the broker"

// updateKeybindings enables and disables bindings from the state, in one
// place, and records why each disabled one is disabled: read-only mode,
// missing capabilities of the endpoint, or the view. Help shows the
// reasons; pressing a disabled key shows its reason in the status bar.
func (m *Model) updateKeybindings() {
	k := &m.keys
	if m.why == nil {
		m.why = make(map[*key.Binding]string)
	}
	clear(m.why)
	needs := map[*key.Binding]broker.Capability{
		&k.Lock: broker.CanPeekLock, &k.LockMany: broker.CanPeekLock,
		&k.Complete: broker.CanPeekLock, &k.Abandon: broker.CanAbandon,
		&k.DeadLetter: broker.CanDeadLetter, &k.Defer: broker.CanDefer,
		&k.Renew: broker.CanRenewLock, &k.AutoRenew: broker.CanRenewLock,
		&k.Resubmit: broker.CanPeekLock, &k.ResubmitAll: broker.CanPeekLock,
		&k.CancelScheduled: broker.CanSchedule, &k.Purge: broker.CanPurge,
		&k.Filter: broker.CanBrowse, &k.Replies: broker.CanBrowse, &k.Request: broker.CanBrowse,
	}
	changing := []*key.Binding{&k.Lock, &k.LockMany, &k.Complete, &k.Abandon, &k.DeadLetter, &k.Defer,
		&k.Renew, &k.AutoRenew, &k.Resubmit, &k.ResubmitAll, &k.CancelScheduled, &k.Compose, &k.Edit, &k.Purge,
		&k.CloseClient}
	for b, c := range needs {
		if !m.caps.Supports(c) {
			m.why[b] = m.caps.Reason(c)
		}
	}
	if m.readOnly {
		for _, b := range changing {
			m.why[b] = readOnlyReason
		}
	}
	if m.entity == "" {
		m.why[&k.Info] = "no entity selected"
	}
	if _, ok := broker.ClientsOf(m.client); !ok {
		m.why[&k.Clients] = noClientsReason
	}
	if _, ok := broker.ClientCloserOf(m.client); !ok && m.why[&k.CloseClient] == "" {
		m.why[&k.CloseClient] = noClientsReason
	}
	if m.isTopic() {
		const topic = "a topic holds no messages: pick one of its subscriptions"
		for _, b := range []*key.Binding{&k.Lock, &k.LockMany, &k.Complete, &k.Abandon, &k.DeadLetter, &k.Defer,
			&k.Renew, &k.AutoRenew, &k.Resubmit, &k.ResubmitAll, &k.CancelScheduled, &k.Edit, &k.Purge, &k.Filter,
			&k.Select, &k.SelectAll, &k.Enter, &k.Replies, &k.Request} {
			if m.why[b] == "" {
				m.why[b] = topic
			}
		}
	}
	if m.clients == nil && m.why[&k.CloseClient] == "" {
		m.why[&k.CloseClient] = "works in the connected clients view (" + k.Clients.Help().Key + ")"
	}
	switch m.areaView() {
	case overClients:
		const inClients = "not in the connected clients view (esc goes back)"
		works := map[*key.Binding]bool{&k.Up: true, &k.Down: true, &k.PageUp: true, &k.PageDown: true, &k.Top: true,
			&k.Bottom: true, &k.Back: true, &k.Clients: true, &k.Help: true, &k.Quit: true, &k.Pause: true,
			&k.NextPane: true, &k.PrevPane: true, &k.CloseClient: true}
		for _, n := range k.All() {
			if !works[n.Binding] && m.why[n.Binding] == "" {
				m.why[n.Binding] = inClients
			}
		}
	case overInfo:
		const inInfo = "not in the entity info view (esc goes back)"
		works := map[*key.Binding]bool{&k.Up: true, &k.Down: true, &k.PageUp: true, &k.PageDown: true, &k.Top: true,
			&k.Bottom: true, &k.Back: true, &k.Info: true, &k.NextEntity: true, &k.PrevEntity: true, &k.Help: true,
			&k.Quit: true, &k.Pause: true, &k.Log: true, &k.Jump: true, &k.Zoom: true, &k.Sidebar: true}
		for _, n := range k.All() {
			if !works[n.Binding] && m.why[n.Binding] == "" {
				m.why[n.Binding] = inInfo
			}
		}
	case overDetail:
		const inDetail = "not in the detail view (esc goes back)"
		for _, b := range []*key.Binding{&k.NextPane, &k.PrevPane, &k.Pane[0], &k.Pane[1], &k.Pane[2], &k.Pane[3],
			&k.Pane[4], &k.NextEntity, &k.PrevEntity, &k.Select, &k.SelectAll, &k.Filter, &k.ResubmitAll, &k.Purge} {
			if m.why[b] == "" {
				m.why[b] = inDetail
			}
		}
	}
	for _, n := range k.All() {
		n.Binding.SetEnabled(m.why[n.Binding] == "")
	}
}

// reason returns why b is disabled ("" when it works).
func (m *Model) reason(b *key.Binding) string { return m.why[b] }
