package model

import (
	"time"

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

// ownAt is the time an own action is shown with.
func ownAt(t time.Time) string { return t.UTC().Format("15:04:05") }
