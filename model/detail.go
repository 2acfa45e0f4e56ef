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
// its history and session state, and draws itself with what it gathers
// from the root model (info: the lock held on the message, the hints that
// name keys and jumps, the dashboard's own actions). It is a view of the
// main area while open (not nil).
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
// message, or for a view closed since (nil), is dropped.
func (d *detailState) takeHistory(msg historyMsg) {
	if d == nil || d.address != msg.address || d.msg.SequenceNumber != msg.seq {
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

// lines renders the view's lines for this frame: the message with the
// lock held on it and what the root shows beside it (info).
func (d *detailState) lines(m *Model) []string {
	msg, info := d.info(m)
	return ui.DetailLines(m.common(), msg, info, d.body, d.width)
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
func openDetail(m *Model) tea.Cmd {
	cur := m.focused().current()
	if cur == nil {
		return m.refuse(&m.keys.Enter, "no message here")
	}
	m.detail = newDetail(m.focus, msgAddress(m.entity, m.focus, cur), cur)
	m.detail.rerender(m)
	return tea.Batch(m.detail.readState(m), m.detail.historyCmd(m))
}

// rerender renders the open detail view's body again (new width or
// theme); a closed view (nil) does nothing.
func (d *detailState) rerender(m *Model) {
	if d != nil {
		d.render(m.common(), m.layout().Main.W)
	}
}

// message returns the message of the view with the lock this dashboard
// holds on it, if any.
func (d *detailState) message(m *Model) (*broker.Message, *heldLock) {
	h := m.held[heldKey{d.address, d.msg.SequenceNumber}]
	if h != nil {
		x := *d.msg
		x.LockToken, x.LockedUntil = h.msg.LockToken, h.msg.LockedUntil
		return &x, h
	}
	return d.msg, nil
}

// info gathers what the view shows beside its message: the message with
// the lock held on it, the hints naming keys and jumps, and the history.
func (d *detailState) info(m *Model) (*broker.Message, ui.DetailInfo) {
	msg, h := d.message(m)
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

// historyCmd reads the history of the view's message when the endpoint
// keeps histories; nil otherwise (the view shows the dashboard's own
// actions), or when the view is closed (nil).
func (d *detailState) historyCmd(m *Model) tea.Cmd {
	hr, ok := broker.HistoryOf(m.client)
	if d == nil || !ok {
		return nil
	}
	return d.readHistory(m.life, hr, m.opts.Timeout)
}

// historyTick reads the view's history again when its message changed
// since the last reading (nil for none, or a closed view).
func (d *detailState) historyTick(m *Model) tea.Cmd {
	if d != nil && d.historyStale {
		return d.historyCmd(m)
	}
	return nil
}

// readState reads the state of the session of the view's message, on a
// session-aware entity.
func (d *detailState) readState(m *Model) tea.Cmd {
	sc, ok := broker.SessionsOf(m.client)
	if !ok || d.msg.SessionID == "" || !m.requiresSession() {
		return nil
	}
	entity, id, timeout := m.entity, d.msg.SessionID, m.opts.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		state, err := sc.SessionState(ctx, entity, id)
		return sessionStateMsg{entity: entity, sessionID: id, state: state, err: err}
	}
}

// onSessionState shows a session's state in the view that asked; a closed
// view (nil) or one showing another message drops it.
func (d *detailState) onSessionState(m *Model, msg sessionStateMsg) {
	if d == nil || msg.entity != m.entity || d.msg.SessionID != msg.sessionID {
		return
	}
	if msg.err != nil {
		m.setErr(msg.err)
		return
	}
	d.takeState(msg.state)
	d.rerender(m)
}

// viewPage is how many lines the views of the main area of layout l show
// below their title line.
func viewPage(l ui.Layout) int { return max(1, l.Main.H-1) }

// id names the detail view.
func (d *detailState) id() overlay { return overDetail }

// isOpen reports whether the detail view is open (not nil).
func (d *detailState) isOpen() bool { return d != nil }

// modal is false: the detail view lets the keys it does not take through
// to the main actions on its message.
func (d *detailState) modal() bool { return false }

// key scrolls the view; esc leaves the jump that opened it, or closes it.
// The keys it does not take fall through to the main actions on the
// view's message.
func (d *detailState) key(m *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	taken, back := d.update(msg, &m.keys, viewPage(m.layout()), len(d.lines(m)))
	if !back {
		return nil, taken
	}
	if n := len(m.jumps); n > 0 && m.jumps[n-1].opened == d {
		return m.popJump(), true
	}
	m.detail = nil
	return nil, true
}

// click takes the clicks on the main area, which the view covers.
func (d *detailState) click(m *Model, ms tea.Mouse) (tea.Cmd, bool) {
	return nil, inMainArea(m, ms.X, ms.Y)
}

// wheel scrolls the view.
func (d *detailState) wheel(m *Model, _ tea.Mouse, delta int) (tea.Cmd, bool) {
	d.scroll(delta, viewPage(m.layout()), len(d.lines(m)))
	return nil, true
}

// close closes the view.
func (d *detailState) close(m *Model) { m.detail = nil }

// frame draws the view in the main area.
func (d *detailState) frame(m *Model, _ *ui.Common, s *ui.Screen) {
	s.DetailOpen = true
	s.DetailTitle, s.DetailLines, s.DetailTop = d.view(d.lines(m))
}
