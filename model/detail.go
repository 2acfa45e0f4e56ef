package model

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// detailState is the detail view of one message, a component: it owns
// the message shown, its rendered body, the session state and history
// read for it and its scroll position; it takes its keys in update, reads
// its history through the reader it is given and draws itself in view
// from what the root model gathers (the lock held on the message, the
// hints that name keys and jumps, the dashboard's own actions).
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

// newDetail returns the detail view of msg, shown in pane of address.
func newDetail(pane int, address string, msg *broker.Message) *detailState {
	return &detailState{pane: pane, address: address, msg: msg}
}

// render renders the body section in width cells (a new message, width,
// theme or session state).
func (d *detailState) render(c *ui.Common, width int) {
	d.width = width
	d.body = ui.DetailBody(c, d.msg, d.width)
	if d.state != nil {
		d.body = append(d.body, ui.SessionState(c, d.msg.SessionID, *d.state, d.width)...)
	}
}

// refresh updates the message from a new window of its pane (delivery
// count, lock), keeping the rendered body: the body of a stored message
// never changes. A change asks to read the history again.
func (d *detailState) refresh(rows []*broker.Message) {
	for _, x := range rows {
		if x.SequenceNumber == d.msg.SequenceNumber {
			old := d.msg
			if old.LockToken != x.LockToken || old.DeliveryCount != x.DeliveryCount || old.State != x.State || old.SubQueue != x.SubQueue {
				d.historyStale = true
			}
			d.msg = x
			return
		}
	}
}

// takeState keeps the session state read for the message; the body shows
// it from the next render.
func (d *detailState) takeState(state []byte) { d.state = &state }

// readHistory starts reading the message's history through hr, under life.
func (d *detailState) readHistory(life context.Context, hr broker.HistoryReader, timeout time.Duration) tea.Cmd {
	d.historyStale = false
	address, seq := d.address, d.msg.SequenceNumber
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(life, timeout)
		defer cancel()
		h, err := hr.History(ctx, address, seq)
		return historyMsg{address: address, seq: seq, h: h, err: err}
	}
}

// takeHistory shows a history read for the view; one read for another
// message is dropped.
func (d *detailState) takeHistory(msg historyMsg) {
	if d.address != msg.address || d.msg.SequenceNumber != msg.seq {
		return
	}
	d.history, d.historyErr = &msg.h, msg.err
	if msg.err != nil {
		d.history = nil
	}
}

// historyInfo is the history part of the view: the history read when the
// endpoint keeps them, own the dashboard's own actions on the message.
func (d *detailState) historyInfo(keeps bool, own []ui.OwnAction) *ui.HistoryInfo {
	info := ui.HistoryInfo{Kept: keeps, History: d.history, Own: own}
	if d.historyErr != nil {
		info.Err = d.historyErr.Error()
	}
	return &info
}

// lines renders the view's lines of msg (the message shown, with the
// lock held on it) with info.
func (d *detailState) lines(c *ui.Common, msg *broker.Message, info ui.DetailInfo) []string {
	return ui.DetailLines(c, msg, info, d.body, d.width)
}

// update takes a key, the view being n lines of which page show at once:
// esc asks to go back (the root model leaves a jump or closes the view),
// enter is taken and does nothing, the moving keys scroll; taken is false
// for the others, which fall through to the main actions on the message.
func (d *detailState) update(msg tea.KeyPressMsg, k *keymap.KeyMap, page, n int) (taken, back bool) {
	switch {
	case keymap.Pressed(msg, k.Back):
		return true, true
	case keymap.Pressed(msg, k.Enter):
		return true, false
	}
	return k.Scroll(msg, &d.top, max(0, n-page), page), false
}

// scroll moves the view of n lines by delta lines (the mouse wheel).
func (d *detailState) scroll(delta, page, n int) { d.top = max(0, min(max(0, n-page), d.top+delta)) }

// view is what the view draws of its lines: its title line, the lines and
// the first one shown.
func (d *detailState) view(lines []string) (title string, _ []string, top int) {
	title = fmt.Sprintf("%s › %s › %d", d.address, category(d.pane), d.msg.SequenceNumber)
	return title, lines, min(d.top, max(0, len(lines)-1))
}

// openDetail opens the detail view of the message under the cursor.
func (m *Model) openDetail() tea.Cmd {
	cur := m.focused().current()
	if cur == nil {
		return m.refuse(&m.keys.Enter, "no message here")
	}
	m.detail = newDetail(m.focus, msgAddress(m.entity, m.focus, cur), cur)
	m.rerenderDetail()
	return tea.Batch(m.sessionStateCmd(cur), m.historyCmd())
}

// rerenderDetail renders the open detail view's body again (new width or
// theme).
func (m *Model) rerenderDetail() {
	if m.detail != nil {
		m.detail.render(m.common(), m.layout().Main.W)
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
	msg, info := m.detailInfo()
	return m.detail.lines(m.common(), msg, info)
}

// detailInfo gathers what the detail view shows beside its message: the
// message with the lock held on it, the hints naming keys and jumps, and
// the history.
func (m *Model) detailInfo() (*broker.Message, ui.DetailInfo) {
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
	_, keeps := broker.HistoryOf(m.client)
	path, _ := broker.SplitAddress(d.address)
	info.History = d.historyInfo(keeps, m.own[ownKey{path, d.msg.SequenceNumber}])
	return msg, info
}

// detailKey gives a key to the detail view: esc leaves the jump that
// opened it, or closes it; ok is false for the keys it does not take,
// which fall through to the main actions on the detail's message.
func (m *Model) detailKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	d := m.detail
	taken, back := d.update(msg, &m.keys, m.viewPage(), len(m.detailLines()))
	if !back {
		return nil, taken
	}
	if n := len(m.jumps); n > 0 && m.jumps[n-1].opened == d {
		return m.popJump(), true
	}
	m.detail = nil
	return nil, true
}

// viewPage is how many lines the views of the main area show below their
// title line.
func (m *Model) viewPage() int { return max(1, m.layout().Main.H-1) }
