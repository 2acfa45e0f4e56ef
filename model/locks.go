package model

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// heldKey names a lock this dashboard holds: the address it was received
// from and the message's sequence number.
type heldKey struct {
	address string
	seq     int64
}

// heldLock is a lock this dashboard holds and can settle.
type heldLock struct {
	msg       *broker.Message // carries LockToken and LockedUntil
	address   string
	autoRenew bool
	autoUntil time.Time // auto-renew stops here
	renewing  bool
	settling  bool
}

// ghost is a row that stays in the Locked pane, flashing, after its lock
// expired or was lost.
type ghost struct {
	entity string
	msg    *broker.Message
	kind   string // ui.FlashExpired or ui.FlashLost
	until  time.Time
}

// hold records messages received under lock from address.
func (m *Model) hold(address string, msgs []*broker.Message) {
	for _, msg := range msgs {
		if !msg.Locked() {
			continue
		}
		m.held[heldKey{address, msg.SequenceNumber}] = &heldLock{msg: msg, address: address}
	}
}

// addGhost makes msg flash in the Locked pane for FlashFor.
func (m *Model) addGhost(entity string, msg *broker.Message, kind string) {
	for i := range m.ghosts {
		g := &m.ghosts[i]
		if g.entity == entity && g.msg.SequenceNumber == msg.SequenceNumber {
			g.kind, g.until = kind, m.now.Add(FlashFor)
			return
		}
	}
	m.ghosts = append(m.ghosts, ghost{entity: entity, msg: msg, kind: kind, until: m.now.Add(FlashFor)})
}

// hasGhost reports whether message seq of entity flashes as a ghost.
func (m *Model) hasGhost(entity string, seq int64) bool {
	return slices.ContainsFunc(m.ghosts, func(g ghost) bool { return g.entity == entity && g.msg.SequenceNumber == seq })
}

// detectEndedLocks compares the Locked window before and after a refresh:
// a message that left it when its lock was due has had its lock expire.
// (Events say so more precisely where the endpoint has them.)
func (m *Model) detectEndedLocks(before, after []*broker.Message, at time.Time) {
	if len(before) == 0 {
		return
	}
	now := make(map[int64]bool, len(after))
	for _, x := range after {
		now[x.SequenceNumber] = true
	}
	last := int64(-1)
	if len(after) > 0 {
		last = after[len(after)-1].SequenceNumber
	}
	for _, x := range before {
		if now[x.SequenceNumber] || x.LockedUntil.IsZero() {
			continue
		}
		if len(after) > 0 && x.SequenceNumber > last {
			continue // scrolled out of the window, not gone
		}
		if !x.LockedUntil.After(at.Add(250*time.Millisecond)) && !m.hasGhost(m.entity, x.SequenceNumber) {
			// A ghost already there (a held lock lost with its session
			// lock, say) knows more than the window does.
			m.addGhost(m.entity, x, ui.FlashExpired)
		}
	}
}

// expireHeld drops held locks whose time has passed; they flash as expired.
// A session lock that ran out takes its message locks with it: they are
// lost.
func (m *Model) expireHeld() {
	if s := m.session; s != nil && !s.renewing && !s.LockedUntil.After(m.now) {
		m.sessionEnded(true)
	}
	var gone []heldKey
	for k, h := range m.held {
		if !h.msg.LockedUntil.IsZero() && !h.msg.LockedUntil.After(m.now) && !h.renewing && !h.settling {
			gone = append(gone, k)
		}
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].seq < gone[j].seq })
	for _, k := range gone {
		h := m.held[k]
		delete(m.held, k)
		path, _ := broker.SplitAddress(k.address)
		m.addGhost(path, h.msg, ui.FlashExpired)
		m.setInfo(fmt.Sprintf("lock on sequence number %d expired", k.seq))
	}
}

// autoRenew renews held locks marked for auto-renew, and those an open
// dialog is about (dialogState.holds), when a third of the lock duration
// (at most 10 s) is left, and the session lock they were taken under.
func (m *Model) autoRenew() tea.Cmd {
	var cmds []tea.Cmd
	ahead := min(10*time.Second, m.lockDuration()/3)
	var open []heldKey // the locks of an open dialog are kept while it is
	if m.dialog != nil {
		open = m.dialog.holds
	}
	for k, h := range m.held {
		if h.renewing || h.settling || m.inHeldSession(k, h) { // autoRenewSession keeps these
			continue
		}
		if !h.autoRenew {
			if slices.Contains(open, k) && h.msg.LockedUntil.Sub(m.now) <= ahead {
				h.renewing = true
				cmds = append(cmds, m.renewCmd(k, h, true))
			}
			continue
		}
		if !h.autoUntil.IsZero() && !m.now.Before(h.autoUntil) {
			h.autoRenew = false
			m.setInfo(fmt.Sprintf("auto-renew of sequence number %d ended after %s", k.seq, m.opts.AutoRenewFor))
			continue
		}
		if h.msg.LockedUntil.Sub(m.now) <= ahead {
			h.renewing = true
			cmds = append(cmds, m.renewCmd(k, h, true))
		}
	}
	if cmd := m.autoRenewSession(ahead, open); cmd != nil {
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

// autoRenewSession renews the held session lock when ahead or less of it is
// left and one of its message locks is auto-renewed or held by an open
// dialog (open): the session lock covers its messages' locks, so keeping
// one means renewing the other.
func (m *Model) autoRenewSession(ahead time.Duration, open []heldKey) tea.Cmd {
	s := m.session
	if s == nil || s.renewing || s.LockedUntil.Sub(m.now) > ahead {
		return nil
	}
	for k, h := range m.held {
		if m.inHeldSession(k, h) && (h.autoRenew || slices.Contains(open, k)) {
			return m.renewSession()
		}
	}
	return nil
}

// pruneGhosts drops ghosts whose flash is over.
func (m *Model) pruneGhosts() {
	out := m.ghosts[:0]
	for _, g := range m.ghosts {
		if m.now.Before(g.until) {
			out = append(out, g)
		}
	}
	m.ghosts = out
}

// renewCmd renews one held lock.
func (m *Model) renewCmd(k heldKey, h *heldLock, auto bool) tea.Cmd {
	c, timeout, token := m.client, m.opts.Timeout, h.msg.LockToken
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		until, err := c.RenewLock(ctx, k.address, token)
		return renewedMsg{key: k, until: until, auto: auto, err: err}
	}
}

// settleCmd settles one held lock.
func (m *Model) settleCmd(k heldKey, h *heldLock, s broker.Settlement) tea.Cmd {
	c, timeout := m.client, m.opts.Timeout
	s.Entity, s.Token = k.address, h.msg.LockToken
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		return settledMsg{key: k, kind: s.Kind, err: c.Settle(ctx, s)}
	}
}

// onRenewed takes the result of a renewal.
func (m *Model) onRenewed(msg renewedMsg) tea.Cmd {
	h := m.held[msg.key]
	if h == nil {
		return nil
	}
	h.renewing = false
	if msg.err != nil {
		m.setErr(msg.err)
		if errors.Is(msg.err, broker.ErrLockLost) {
			m.lostHeld(msg.key)
		}
		return nil
	}
	c := h.msg.Clone()
	c.LockedUntil = msg.until
	h.msg = c
	if !msg.auto {
		m.setInfo(fmt.Sprintf("renewed lock on sequence number %d until %s", msg.key.seq, msg.until.UTC().Format("15:04:05")))
	}
	m.noteOwn(msg.key.address, msg.key.seq, "renewed the lock until "+ownAt(msg.until))
	return m.requestRefresh()
}

// onSettled takes the result of a settlement.
func (m *Model) onSettled(msg settledMsg) tea.Cmd {
	h := m.held[msg.key]
	if h != nil {
		h.settling = false
	}
	if msg.err != nil {
		m.setErr(fmt.Errorf("%s of sequence number %d: %w", msg.kind, msg.key.seq, msg.err))
		if errors.Is(msg.err, broker.ErrLockLost) {
			m.lostHeld(msg.key)
		}
		return m.requestRefresh()
	}
	delete(m.held, msg.key)
	m.setInfo(fmt.Sprintf("%s: sequence number %d", pastTense(msg.kind), msg.key.seq))
	m.noteOwn(msg.key.address, msg.key.seq, pastTense(msg.kind))
	return m.requestRefresh()
}

// lostHeld forgets a held lock that the broker says is gone.
func (m *Model) lostHeld(k heldKey) {
	h := m.held[k]
	if h == nil {
		return
	}
	delete(m.held, k)
	path, _ := broker.SplitAddress(k.address)
	m.addGhost(path, h.msg, ui.FlashLost)
}

func pastTense(k broker.SettleKind) string {
	switch k {
	case broker.Complete:
		return "completed"
	case broker.Abandon:
		return "abandoned"
	case broker.DeadLetter:
		return "dead-lettered"
	case broker.Defer:
		return "deferred"
	case broker.Release:
		return "released"
	}
	return k.String()
}

// heldInOrder returns the locks held at the given addresses in sequence
// order: the Locked pane (or the Dead-lettered one) of an endpoint that
// shows only its own locks.
func (m *Model) heldInOrder(addrs ...string) []*broker.Message {
	var out []*broker.Message
	for k, h := range m.held {
		if slices.Contains(addrs, k.address) {
			out = append(out, h.msg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SequenceNumber < out[j].SequenceNumber })
	return out
}
