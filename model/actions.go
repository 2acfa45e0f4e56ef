package model

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgfilter"
	"github.com/peeklock/peeklock/ui"
)

// target is the message a key acts on: the one in the detail view, or the
// one under the cursor of the focused pane.
func (m *Model) target() (*broker.Message, int) {
	if m.detail != nil {
		return m.detail.msg, m.detail.pane
	}
	return m.focused().current(), m.focus
}

// targetSeqs returns the sequence numbers a key acts on in pane i: the
// selection, or the message under the cursor (or in the detail view).
func (m *Model) targetSeqs() ([]int64, int) {
	cur, i := m.target()
	if m.detail == nil {
		if sel := m.panes[i].selected; len(sel) > 0 {
			seqs := make([]int64, 0, len(sel))
			for s := range sel {
				seqs = append(seqs, s)
			}
			sort.Slice(seqs, func(a, b int) bool { return seqs[a] < seqs[b] })
			return seqs, i
		}
	}
	if cur == nil {
		return nil, i
	}
	return []int64{cur.SequenceNumber}, i
}

// heldTargets returns the held locks a settling key acts on, or why there
// are none.
func (m *Model) heldTargets() ([]heldKey, string) {
	seqs, i := m.targetSeqs()
	if len(seqs) == 0 {
		return nil, "no message here"
	}
	var keys []heldKey
	for _, s := range seqs {
		for _, addr := range addresses(m.entity, i) {
			if m.held[heldKey{addr, s}] != nil {
				keys = append(keys, heldKey{addr, s})
			}
		}
	}
	if len(keys) > 0 {
		return keys, ""
	}
	if len(seqs) > 1 {
		return nil, "this dashboard holds no lock on the selected messages (press l to lock)"
	}
	cur, _ := m.target()
	switch {
	case cur != nil && !cur.LockedUntil.IsZero():
		return nil, fmt.Sprintf("sequence number %d is locked by another receiver; only locks this dashboard holds can be settled", seqs[0])
	case category(i) == broker.CategoryDeferred:
		return nil, fmt.Sprintf("sequence number %d is deferred: press l to lock it first", seqs[0])
	}
	return nil, fmt.Sprintf("sequence number %d is not locked by this dashboard: press l to lock the next message", seqs[0])
}

// lock receives messages under peek-lock: the next n of the entity (of a
// session on a session-aware entity: see lockInSession) (or, on
// the Dead-lettered pane, of the dead-letter sub-queue of the message under
// the cursor: the transfer one for a transfer-dead-lettered message), or on
// the Deferred pane the selected deferred messages by sequence number
// (under their session's lock on a session-aware entity: see
// lockDeferredInSession).
func (m *Model) lock(n int) tea.Cmd {
	if m.entity == "" {
		return m.refuse(&m.keys.Lock, "no entity selected")
	}
	c, timeout, entity := m.client, m.opts.Timeout, m.entity
	_, i := m.target()
	switch category(i) {
	case broker.CategoryDeferred:
		if why := m.main.cursorJustMoved(m); why != "" {
			return m.refuse(&m.keys.Lock, why)
		}
		seqs, _ := m.targetSeqs()
		if len(seqs) == 0 {
			return m.refuse(&m.keys.Lock, "no deferred message here")
		}
		if m.requiresSession() {
			return m.lockDeferredInSession(seqs, i)
		}
		m.panes[i].clearSelection()
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(m.life, timeout)
			defer cancel()
			msgs, err := c.ReceiveDeferred(ctx, entity, seqs)
			return lockedMsg{address: entity, msgs: msgs, err: err}
		}
	case broker.CategoryDeadLettered:
		sub := broker.SubQueueDeadLetter
		if cur, _ := m.target(); cur != nil && cur.SubQueue == broker.SubQueueTransferDeadLetter {
			sub = broker.SubQueueTransferDeadLetter
		}
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(m.life, timeout)
			defer cancel()
			msgs, err := c.Receive(ctx, broker.ReceiveRequest{Entity: entity, SubQueue: sub, Mode: broker.PeekLock, Max: n})
			return lockedMsg{address: broker.SubQueueAddress(entity, sub), msgs: msgs, err: err}
		}
	}
	if m.requiresSession() {
		return m.lockInSession(n)
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		msgs, err := c.Receive(ctx, broker.ReceiveRequest{Entity: entity, Mode: broker.PeekLock, Max: n})
		return lockedMsg{address: entity, msgs: msgs, err: err}
	}
}

// onLocked takes messages received under lock: they are held, and the
// Locked pane shows them.
func (m *Model) onLocked(msg lockedMsg) tea.Cmd {
	if cmd, done := m.onSessionLocked(msg); done {
		return cmd
	}
	if msg.err != nil {
		m.setErr(msg.err)
		return m.requestRefresh()
	}
	if len(msg.msgs) == 0 {
		m.setInfo("nothing to lock: no available message")
		return m.requestRefresh()
	}
	m.hold(msg.address, msg.msgs)
	seqs := make([]string, 0, len(msg.msgs))
	for _, x := range msg.msgs {
		seqs = append(seqs, fmt.Sprint(x.SequenceNumber))
		m.noteOwn(msg.address, x.SequenceNumber, "locked until "+ownAt(x.LockedUntil))
	}
	path, sub := broker.SplitAddress(msg.address)
	from := ""
	if sub == broker.SubQueueTransferDeadLetter {
		from = " from the transfer dead-letter queue"
	}
	m.setInfo(fmt.Sprintf("locked %d message(s)%s: sequence number %s", len(msg.msgs), from, strings.Join(seqs, ", ")))
	if path == m.entity && sub == broker.SubQueueMain && m.detail == nil {
		m.focus = lockedPane // with the cursor on the new lock
		p := &m.panes[lockedPane]
		p.wantSeq = msg.msgs[0].SequenceNumber
		if m.localPane(lockedPane) {
			m.main.syncLocalPanes(m)
		}
	}
	return m.requestRefresh()
}

// settle settles the target locks with s (kind, reason, description).
func (m *Model) settle(b *key.Binding, s broker.Settlement) tea.Cmd {
	keys, why := m.heldTargets()
	if len(keys) == 0 {
		return m.refuse(b, why)
	}
	if len(keys) == 1 {
		h := m.held[keys[0]]
		if h.settling {
			return m.refuse(b, "already being settled")
		}
		h.settling = true
		return m.settleCmd(keys[0], h, s)
	}
	m.panes[m.focus].clearSelection()
	return m.bulk.settle(m, keys, s)
}

// renew renews the target locks; with no held lock under the cursor, or
// when the targets are messages of the session the dashboard holds on this
// entity, that session lock (which covers its messages' locks).
func (m *Model) renew() tea.Cmd {
	keys, why := m.heldTargets()
	if m.session != nil && m.session.Entity == m.entity && !slices.ContainsFunc(keys, func(k heldKey) bool { return !m.inHeldSession(k, m.held[k]) }) {
		return m.renewSession()
	}
	if len(keys) == 0 {
		return m.refuse(&m.keys.Renew, why)
	}
	var cmds []tea.Cmd
	if len(keys) > m.opts.Concurrency {
		return m.bulk.renew(m, keys)
	}
	for _, k := range keys {
		h := m.held[k]
		if h.renewing {
			continue
		}
		h.renewing = true
		cmds = append(cmds, m.renewCmd(k, h, false))
	}
	return tea.Batch(cmds...)
}

// toggleAutoRenew turns auto-renew on or off for the target locks.
func (m *Model) toggleAutoRenew() tea.Cmd {
	keys, why := m.heldTargets()
	if len(keys) == 0 {
		return m.refuse(&m.keys.AutoRenew, why)
	}
	on := !m.held[keys[0]].autoRenew
	for _, k := range keys {
		h := m.held[k]
		h.autoRenew = on
		h.autoUntil = m.now.Add(m.opts.AutoRenewFor)
	}
	if on {
		m.setInfo(fmt.Sprintf("auto-renew on for %d lock(s), for up to %s", len(keys), m.opts.AutoRenewFor))
		return m.autoRenew()
	}
	m.setInfo(fmt.Sprintf("auto-renew off for %d lock(s)", len(keys)))
	return nil
}

// resubmit sends dead-lettered messages back to their entity (the
// selection, or the one under the cursor), locking them first.
func (m *Model) resubmit() tea.Cmd {
	_, i := m.target()
	if category(i) != broker.CategoryDeadLettered {
		return m.refuse(&m.keys.Resubmit, "works on the Dead-lettered pane (press 5)")
	}
	seqs, _ := m.targetSeqs()
	if len(seqs) == 0 {
		return m.refuse(&m.keys.Resubmit, "no message here")
	}
	m.panes[i].clearSelection()
	return m.bulk.resubmit(m, seqs)
}

// cancelScheduled asks to confirm cancelling the target scheduled
// messages, naming their sequence numbers, and cancels them.
func (m *Model) cancelScheduled() tea.Cmd {
	_, i := m.target()
	if category(i) != broker.CategoryScheduled {
		return m.refuse(&m.keys.CancelScheduled, "works on the Scheduled pane (press 4)")
	}
	seqs, _ := m.targetSeqs()
	if len(seqs) == 0 {
		return m.refuse(&m.keys.CancelScheduled, "no message here")
	}
	names := make([]string, len(seqs))
	for k, s := range seqs {
		names[k] = fmt.Sprint(s)
	}
	title := "Cancel scheduled message " + names[0]
	what := "sequence number " + names[0]
	if len(seqs) > 1 {
		title = fmt.Sprintf("Cancel %d scheduled messages", len(seqs))
		what = "sequence numbers " + strings.Join(names, ", ")
	}
	d := newDialog(dlgConfirm, title, m.width)
	d.text = []string{
		"This removes the scheduled " + what + " of " + ui.Sanitize(m.entity) + ":",
		"it will not be sent. It cannot be undone.",
	}
	d.footer = "enter or y cancel the message · esc keep it"
	c, timeout, entity := m.client, m.opts.Timeout, m.entity
	d.submit = func(*dialogState) (tea.Cmd, error) {
		m.panes[i].clearSelection()
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(m.life, timeout)
			defer cancel()
			return cancelledMsg{entity: entity, seqs: seqs, err: c.CancelScheduled(ctx, entity, seqs)}
		}, nil
	}
	m.dialog = d
	return nil
}

// edit opens the compose dialog with a copy of the target message.
func (m *Model) edit() tea.Cmd {
	cur, i := m.target()
	if cur == nil {
		return m.refuse(&m.keys.Edit, "no message here")
	}
	cmd := openCompose(m, cur)
	// A copy of a message this dashboard holds: its lock is kept while the
	// copy is edited, to settle the original after.
	if k := (heldKey{msgAddress(m.entity, i, cur), cur.SequenceNumber}); m.held[k] != nil && m.dialog != nil {
		d := m.dialog
		d.holds = []heldKey{k}
		d.live = func(d *dialogState) { d.text = holdText(m, d.holds) }
		d.live(d)
	}
	return cmd
}

// jump is where a jump to replies, or to the request of a reply, came
// from.
type jump struct {
	entity string
	focus  int
	filter filterSpec
	// A jump to a request also restores the detail view it started from
	// (nil for none) and the focused pane's window (top) and cursor (the
	// message seq, -1 for none); opened is the detail view it opened, which
	// esc leaves by coming back.
	detail *detailState
	top    int64
	seq    int64
	opened *detailState
}

// popJump comes back from the last jump.
func (m *Model) popJump() tea.Cmd {
	j := m.jumps[len(m.jumps)-1]
	m.jumps = m.jumps[:len(m.jumps)-1]
	m.filter = j.filter
	m.focus = j.focus
	m.switchEntity(j.entity)
	if j.opened != nil {
		for i := range m.panes {
			m.panes[i].reset()
		}
		p := m.focused()
		p.top = j.top
		if j.top != 0 {
			p.pos = 0
		}
		if j.seq >= 0 {
			p.wantSeq = j.seq
		}
		m.detail = j.detail
		m.detail.rerender(m)
	}
	m.setInfo("back to " + j.entity)
	return m.requestRefresh()
}

// replies jumps from a message to the messages whose CorrelationId is its
// MessageId, in the entity its ReplyTo names (or this one); esc comes back.
func (m *Model) replies() tea.Cmd {
	cur, _ := m.target()
	if cur == nil {
		return m.refuse(&m.keys.Replies, "no message here")
	}
	if cur.MessageID == "" {
		return m.refuse(&m.keys.Replies, "the message has no MessageId")
	}
	to := m.entity
	if e := m.entityNamed(cur.ReplyTo); e != "" {
		to = e
	}
	m.jumps = append(m.jumps, jump{entity: m.entity, focus: m.focus, filter: m.filter})
	m.filter = filterSpec{msgfilter.Property("CorrelationId", cur.MessageID)}
	m.detail = nil
	for i := range m.panes {
		m.panes[i].reset()
	}
	m.switchEntity(to)
	m.setInfo(fmt.Sprintf("replies to %q in %s (esc goes back)", cur.MessageID, to))
	return m.requestRefresh()
}

// entityNamed resolves a ReplyTo address to a known entity path: the path
// itself, or the last segments of a URL ("sb://ns/queue").
func (m *Model) entityNamed(addr string) string {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return ""
	}
	if i := strings.Index(addr, "://"); i >= 0 {
		rest := addr[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			addr = rest[j+1:]
		}
	}
	for _, e := range m.entities {
		if strings.EqualFold(e.Path, addr) && e.Kind != broker.KindTopic {
			return e.Path
		}
	}
	return ""
}
