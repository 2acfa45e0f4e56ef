package model

import (
	"context"
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
	d := m.detail
	hr, ok := broker.HistoryOf(m.client)
	if d == nil || !ok {
		return nil
	}
	d.historyStale = false
	address, seq, timeout := d.address, d.msg.SequenceNumber, m.opts.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		h, err := hr.History(ctx, address, seq)
		return historyMsg{address: address, seq: seq, h: h, err: err}
	}
}

// onHistory shows a history in the detail view that asked for it.
func (m *Model) onHistory(msg historyMsg) {
	d := m.detail
	if d == nil || d.address != msg.address || d.msg.SequenceNumber != msg.seq {
		return
	}
	d.history, d.historyErr = &msg.h, msg.err
	if msg.err != nil {
		d.history = nil
	}
}

// detailHistory returns the history part of the detail view.
func (m *Model) detailHistory() *ui.HistoryInfo {
	d := m.detail
	_, keeps := broker.HistoryOf(m.client)
	path, _ := broker.SplitAddress(d.address)
	info := ui.HistoryInfo{Kept: keeps, History: d.history, Own: m.own[ownKey{path, d.msg.SequenceNumber}]}
	if d.historyErr != nil {
		info.Err = d.historyErr.Error()
	}
	return &info
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
