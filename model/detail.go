package model

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// detailState is the open detail view.
type detailState struct {
	pane    int
	address string
	msg     *broker.Message
	body    []string // rendered body section, for width
	width   int
	top     int
	// state is the session state of a message of a session-aware entity,
	// once read (nil before).
	state *[]byte
	// history is the message's history once read (endpoints that keep
	// histories), or the error reading it; historyStale asks to read it
	// again (the message changed).
	history      *broker.History
	historyErr   error
	historyStale bool
}

// openDetail opens the detail view of the message under the cursor.
func (m *Model) openDetail() tea.Cmd {
	cur := m.focused().current()
	if cur == nil {
		return m.refuse(&m.keys.Enter, "no message here")
	}
	m.detail = &detailState{pane: m.focus, address: msgAddress(m.entity, m.focus, cur), msg: cur}
	m.rerenderDetail()
	return tea.Batch(m.sessionStateCmd(cur), m.historyCmd())
}

// rerenderDetail renders the body section again (new width or theme).
func (m *Model) rerenderDetail() {
	d := m.detail
	if d == nil {
		return
	}
	d.width = m.layout().Main.W
	d.body = ui.DetailBody(m.common(), d.msg, d.width)
	if d.state != nil {
		d.body = append(d.body, ui.SessionState(m.common(), d.msg.SessionID, *d.state, d.width)...)
	}
}

// refreshDetail updates the message of the detail view from a new window
// (delivery count, lock), keeping the rendered body: the body of a stored
// message never changes.
func (m *Model) refreshDetail(rows []*broker.Message) {
	for _, x := range rows {
		if x.SequenceNumber == m.detail.msg.SequenceNumber {
			old := m.detail.msg
			if old.LockToken != x.LockToken || old.DeliveryCount != x.DeliveryCount || old.State != x.State || old.SubQueue != x.SubQueue {
				m.detail.historyStale = true
			}
			m.detail.msg = x
			return
		}
	}
}

// detailMessage returns the message of the detail view with the lock this
// dashboard holds on it, if any.
func (m *Model) detailMessage() (*broker.Message, *heldLock) {
	d := m.detail
	h := m.held[heldKey{d.address, d.msg.SequenceNumber}]
	if h != nil {
		x := *d.msg
		x.LockToken, x.LockedUntil = h.msg.LockToken, h.msg.LockedUntil
		return &x, h
	}
	return d.msg, nil
}

// detailLines renders the detail view's lines for this frame.
func (m *Model) detailLines() []string {
	d := m.detail
	msg, h := m.detailMessage()
	info := ui.DetailInfo{Entity: d.address, LockDuration: m.lockDuration(),
		DeadLettered: category(d.pane) == broker.CategoryDeadLettered}
	if h != nil {
		info.Held, info.AutoRenew = true, h.autoRenew
	}
	if msg.MessageID != "" {
		where := "this entity"
		if e := m.entityNamed(msg.ReplyTo); e != "" {
			where = e
		}
		info.Hints = append(info.Hints, fmt.Sprintf("%s: messages whose CorrelationId is this MessageId, in %s", m.keys.Replies.Help().Key, where))
	}
	if msg.CorrelationID != "" {
		info.Hints = append(info.Hints, fmt.Sprintf("%s: find the request: MessageId = this CorrelationId", m.keys.Request.Help().Key))
	}
	if msg.ReplyTo != "" || msg.ReplyToSessionID != "" {
		info.Hints = append(info.Hints, fmt.Sprintf("replies go to %q, session %q", msg.ReplyTo, msg.ReplyToSessionID))
	}
	if n := len(m.jumps); n > 0 && m.jumps[n-1].opened == d {
		info.Hints = append(info.Hints, "esc: back to the reply")
	} else if n > 0 {
		info.Hints = append(info.Hints, "esc twice: back to the request")
	}
	info.History = m.detailHistory()
	return ui.DetailLines(m.common(), msg, info, d.body, d.width)
}

// detailKey handles the keys that scroll or close the detail view; other
// keys fall through to the main actions, which act on the detail's
// message.
func (m *Model) detailKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := &m.keys
	d := m.detail
	page := m.viewPage()
	maxTop := m.viewMaxTop(len(m.detailLines()))
	switch {
	case keymap.Pressed(msg, k.Back):
		if n := len(m.jumps); n > 0 && m.jumps[n-1].opened == d {
			return m.popJump(), true
		}
		m.detail = nil
		return nil, true
	case keymap.Pressed(msg, k.Enter):
		return nil, true
	}
	return nil, k.Scroll(msg, &d.top, maxTop, page)
}

// viewPage is how many lines the detail and information views show below
// their title line.
func (m *Model) viewPage() int { return max(1, m.layout().Main.H-1) }

// viewMaxTop is the last useful scroll position of a view of n lines in
// the detail view's frame.
func (m *Model) viewMaxTop(n int) int { return max(0, n-m.viewPage()) }
