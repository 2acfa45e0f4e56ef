package model

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// sessionLock is the session lock this dashboard holds on a session-aware
// entity: l locks messages of that session only.
type sessionLock struct {
	broker.SessionLock
	renewing bool
}

// sessionRenewedMsg is the result of renewing the session lock.
type sessionRenewedMsg struct {
	entity, sessionID string
	until             time.Time
	err               error
}

// sessionReleasedMsg is the result of giving a session lock back.
type sessionReleasedMsg struct{ err error }

// sessionStateMsg carries the state of the detail view's session.
type sessionStateMsg struct {
	entity, sessionID string
	state             []byte
	err               error
}

// requiresSession reports whether the selected entity is session-aware.
func (m *Model) requiresSession() bool {
	e, _ := m.currentEntity()
	return e.Settings.RequiresSession
}

// lockInSession receives the next n messages of a session of the selected
// entity: the held session's, or it first accepts the session of the
// message under the cursor (the next available session when the cursor is
// on nothing), giving back a session lock held on another session.
func (m *Model) lockInSession(n int) tea.Cmd {
	want := ""
	if cur, _ := m.target(); cur != nil {
		want = cur.SessionID
	}
	return m.underSession(want, func(ctx context.Context, sc broker.SessionClient, entity, id string) ([]*broker.Message, error) {
		return sc.ReceiveFromSession(ctx, id, broker.ReceiveRequest{Entity: entity, Mode: broker.PeekLock, Max: n})
	})
}

// lockDeferredInSession locks deferred messages of a session-aware entity
// by sequence number: they must all be of one session, whose lock it takes
// first (as lockInSession does) unless the dashboard holds it already.
// The session of each number is read from the Deferred pane's rows (or the
// detail view), so a selected message that is not on screen is refused.
func (m *Model) lockDeferredInSession(seqs []int64, pane int) tea.Cmd {
	bySeq := make(map[int64]string, len(m.panes[pane].rows)+1)
	for _, r := range m.panes[pane].rows {
		bySeq[r.SequenceNumber] = r.SessionID
	}
	if d := m.detail; d != nil && d.pane == pane {
		bySeq[d.msg.SequenceNumber] = d.msg.SessionID
	}
	var sessions []string
	for _, s := range seqs {
		id, ok := bySeq[s]
		if !ok {
			return m.refuse(&m.keys.Lock, fmt.Sprintf("sequence number %d is not on screen, so its session is unknown: select deferred messages of one session on screen", s))
		}
		if !slices.Contains(sessions, id) {
			sessions = append(sessions, id)
		}
	}
	if len(sessions) > 1 {
		slices.Sort(sessions)
		quoted := make([]string, len(sessions))
		for i, id := range sessions {
			quoted[i] = strconv.Quote(id)
		}
		return m.refuse(&m.keys.Lock, fmt.Sprintf("the selected deferred messages belong to %d sessions (%s): lock those of one session at a time", len(sessions), strings.Join(quoted, ", ")))
	}
	if sessions[0] == "" {
		return m.refuse(&m.keys.Lock, fmt.Sprintf("sequence number %d has no session id", seqs[0]))
	}
	m.panes[pane].clearSelection()
	return m.underSession(sessions[0], func(ctx context.Context, sc broker.SessionClient, entity, id string) ([]*broker.Message, error) {
		return sc.ReceiveDeferredFromSession(ctx, entity, id, seqs)
	})
}

// underSession runs receive under the lock of session want of the selected
// entity ("" = the held session, or the next available one): when the
// dashboard holds another session's lock it gives it back first, and
// unless it holds want already it accepts it. The result comes back as a
// lockedMsg, carrying a newly accepted session lock.
func (m *Model) underSession(want string, receive func(ctx context.Context, sc broker.SessionClient, entity, id string) ([]*broker.Message, error)) tea.Cmd {
	sc, ok := broker.SessionsOf(m.client)
	if !ok {
		return m.refuse(&m.keys.Lock, "the entity requires sessions, and "+m.caps.Reason(broker.CanSessions))
	}
	if m.sessionBusy {
		return m.refuse(&m.keys.Lock, "a session is being accepted")
	}
	entity, timeout := m.entity, m.opts.Timeout
	var release *broker.SessionLock
	accept := true
	if s := m.session; s != nil {
		if s.Entity == entity && (want == "" || want == s.SessionID) {
			want, accept = s.SessionID, false
		} else {
			l := s.SessionLock
			release = &l
			m.sessionEnded(false)
		}
	}
	m.sessionBusy = accept
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		out := lockedMsg{address: entity}
		if release != nil {
			if err := sc.UnlockSession(ctx, release.Entity, release.SessionID); err != nil && !errors.Is(err, broker.ErrSessionLockLost) {
				out.err = err
				return out
			}
		}
		id := want
		if accept {
			l, err := sc.LockSession(ctx, entity, want, 0)
			if err != nil {
				out.err = err
				return out
			}
			out.session, id = &l, l.SessionID
		}
		out.msgs, out.err = receive(ctx, sc, entity, id)
		return out
	}
}

// onSessionLocked takes the session part of a lock's result: a newly
// accepted session lock is held (or given back when the user has moved to
// another entity meanwhile). done is true when nothing else is left to do.
func (m *Model) onSessionLocked(msg lockedMsg) (cmd tea.Cmd, done bool) {
	if msg.session == nil {
		if m.sessionBusy && msg.err != nil {
			m.sessionBusy = false
		}
		if errors.Is(msg.err, broker.ErrSessionLockLost) && m.session != nil && m.session.Entity == msg.address {
			m.sessionEnded(false)
			m.setErr(msg.err)
			return m.requestRefresh(), true
		}
		return nil, false
	}
	m.sessionBusy = false
	l := *msg.session
	if l.Entity != m.entity {
		return m.releaseCmd(l), true
	}
	m.session = &sessionLock{SessionLock: l}
	if msg.err == nil && len(msg.msgs) == 0 {
		m.setInfo(fmt.Sprintf("accepted session %q: no available message in it", l.SessionID))
		return m.requestRefresh(), true
	}
	return nil, false
}

// sessionEnded forgets the held session lock; the message locks taken
// through it are lost and flash so. expired says the lock ran out (rather
// than being released or lost).
func (m *Model) sessionEnded(expired bool) {
	s := m.session
	if s == nil {
		return
	}
	for k, h := range m.held {
		if m.inHeldSession(k, h) {
			m.lostHeld(k)
		}
	}
	m.session = nil
	if expired {
		m.setInfo(fmt.Sprintf("session lock of %q expired: its message locks are lost", s.SessionID))
	}
}

// isSessionEvent reports whether ev says the held session lock expired or
// was lost.
func (m *Model) isSessionEvent(ev broker.Event) bool {
	s := m.session
	if s == nil || ev.Sequence != 0 || ev.Token != s.Token {
		return false
	}
	return ev.Kind == broker.EventLockExpired || ev.Kind == broker.EventLockLost
}

// renewSession renews the held session lock.
func (m *Model) renewSession() tea.Cmd {
	s := m.session
	sc, ok := broker.SessionsOf(m.client)
	if !ok || s.renewing {
		return nil
	}
	s.renewing = true
	entity, id, timeout := s.Entity, s.SessionID, m.opts.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		until, err := sc.RenewSession(ctx, entity, id)
		return sessionRenewedMsg{entity: entity, sessionID: id, until: until, err: err}
	}
}

// onSessionRenewed takes the result of renewing the session lock.
func (m *Model) onSessionRenewed(msg sessionRenewedMsg) tea.Cmd {
	s := m.session
	if s == nil || s.Entity != msg.entity || s.SessionID != msg.sessionID {
		return nil
	}
	s.renewing = false
	if msg.err != nil {
		m.setErr(msg.err)
		if errors.Is(msg.err, broker.ErrSessionLockLost) {
			m.sessionEnded(false)
		}
		return m.requestRefresh()
	}
	s.LockedUntil = msg.until
	// The session lock covers the locks of its messages: they last as long.
	covered := 0
	for k, h := range m.held {
		if m.inHeldSession(k, h) {
			c := h.msg.Clone()
			c.LockedUntil = msg.until
			h.msg = c
			m.noteOwn(k.address, k.seq, "renewed the lock until "+ownAt(msg.until)+" with the session lock")
			covered++
		}
	}
	info := fmt.Sprintf("renewed session lock of %q until %s", s.SessionID, msg.until.UTC().Format("15:04:05"))
	if covered > 0 {
		info += fmt.Sprintf(", with the locks of its %d message(s)", covered)
	}
	m.setInfo(info)
	return m.requestRefresh()
}

// inHeldSession reports whether the held lock h (at k) is one of a message
// of the session this dashboard holds: the session lock covers it, so the
// two are renewed together and lost together.
func (m *Model) inHeldSession(k heldKey, h *heldLock) bool {
	s := m.session
	return s != nil && k.address == s.Entity && h.msg.SessionID == s.SessionID
}

// releaseCmd gives a session lock back.
func (m *Model) releaseCmd(l broker.SessionLock) tea.Cmd {
	sc, ok := broker.SessionsOf(m.client)
	if !ok {
		return nil
	}
	timeout := m.opts.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		return sessionReleasedMsg{err: sc.UnlockSession(ctx, l.Entity, l.SessionID)}
	}
}

// releaseStaleSession gives back the session lock when the user has moved
// to another entity.
func (m *Model) releaseStaleSession() tea.Cmd {
	s := m.session
	if s == nil || s.Entity == m.entity {
		return nil
	}
	l := s.SessionLock
	m.sessionEnded(false)
	return m.releaseCmd(l)
}

// releaseSessionNow gives the session lock back before the dashboard goes
// away (Close runs outside Update, so it may wait).
func (m *Model) releaseSessionNow() {
	s := m.session
	if s == nil {
		return
	}
	m.session = nil
	if sc, ok := broker.SessionsOf(m.client); ok {
		ctx, cancel := context.WithTimeout(m.life, m.opts.Timeout)
		defer cancel()
		_ = sc.UnlockSession(ctx, s.Entity, s.SessionID)
	}
}

// sessionStatus is the status bar's session part: the id and the time left
// on the session lock.
func (m *Model) sessionStatus() string {
	s := m.session
	if s == nil {
		return ""
	}
	return fmt.Sprintf("%q %s", s.SessionID, ui.Remaining(s.LockedUntil.Sub(m.now)))
}
