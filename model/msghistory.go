package model

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// historyMsg carries the history of the detail view's message.
type historyMsg struct {
	address string
	seq     int64
	h       broker.History
	err     error
}

// ownKey names a message for the dashboard's own actions: its entity path
// and sequence number (a message keeps them in its dead-letter sub-queue).
type ownKey struct {
	path string
	seq  int64
}

// Bounds of what the dashboard remembers it did.
const (
	maxOwnActions  = 16   // per message, the newest
	maxOwnMessages = 1000 // messages; the whole record starts again beyond
)

// noteOwn records that this dashboard did what to message seq of address,
// for the detail view of an endpoint that keeps no history.
func (m *Model) noteOwn(address string, seq int64, what string) {
	if m.own == nil || len(m.own) >= maxOwnMessages {
		m.own = make(map[ownKey][]ui.OwnAction)
	}
	path, _ := broker.SplitAddress(address)
	k := ownKey{path, seq}
	list := append(m.own[k], ui.OwnAction{At: m.now, What: what})
	if len(list) > maxOwnActions {
		list = list[len(list)-maxOwnActions:]
	}
	m.own[k] = list
}

// historyCmd reads the history of the detail view's message when the
// endpoint keeps histories; nil otherwise (the view shows the dashboard's
// own actions).
func (m *Model) historyCmd() tea.Cmd {
	hr, ok := broker.HistoryOf(m.client)
	if m.detail == nil || !ok {
		return nil
	}
	return m.detail.readHistory(m.life, hr, m.opts.Timeout)
}

// onHistory shows a history in the detail view that asked for it.
func (m *Model) onHistory(msg historyMsg) {
	if m.detail != nil {
		m.detail.takeHistory(msg)
	}
}

// historyTick reads the detail view's history again when its message
// changed since the last reading.
func (m *Model) historyTick() tea.Cmd {
	if d := m.detail; d != nil && d.historyStale {
		return m.historyCmd()
	}
	return nil
}

// ownAt is the time an own action is shown with.
func ownAt(t time.Time) string { return t.UTC().Format("15:04:05") }
