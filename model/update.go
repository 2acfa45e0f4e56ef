package model

import (
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/themes"
	"github.com/peeklock/peeklock/ui"
)

// Update handles one message. It never blocks and never does I/O: broker
// calls run in the commands it returns.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.now = m.clock.Now()
	cmd := m.update(msg)
	if c := m.entInfo.sync(m); c != nil {
		cmd = tea.Batch(cmd, c)
	}
	m.clients.sync(m)
	if r := m.releaseStaleSession(); r != nil {
		cmd = tea.Batch(cmd, r)
	}
	m.main.syncLocalPanes(m)
	if m.dialog != nil && m.dialog.live != nil {
		m.dialog.live(m.dialog)
	}
	m.updateKeybindings()
	if f := m.ensureFrame(); f != nil {
		cmd = tea.Batch(cmd, f)
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		return m.resize(msg.Width, msg.Height)
	case tea.BackgroundColorMsg:
		if !m.themeFixed {
			t := themes.Light()
			if msg.IsDark() {
				t = themes.Dark()
			}
			m.setTheme(t)
			m.detail.rerender(m)
			if m.entInfo != nil {
				m.entInfo.dirty = true
			}
			if m.clients != nil {
				m.clients.dirty = true
			}
		}
		return nil
	case tickMsg:
		if msg.id != m.sched.tickID {
			return nil // a stale tick: the interval changed since
		}
		if m.paused {
			return m.tickCmd()
		}
		return tea.Batch(m.tickCmd(), m.startRefresh(), m.clients.read(m), m.detail.historyTick(m))
	case kickMsg:
		if !m.sched.kicked(msg.id) {
			return nil
		}
		if m.paused {
			return nil
		}
		return m.requestRefresh()
	case frameMsg:
		if !m.sched.frameDue(msg.id) {
			return nil
		}
		m.expireHeld()
		m.pruneGhosts()
		return m.autoRenew()
	case eventsMsg:
		return m.onEvents(msg)
	case refreshMsg:
		return m.applyRefresh(msg)
	case seekMsg:
		return m.main.applySeek(m, msg)
	case lockedMsg:
		return m.onLocked(msg)
	case settledMsg:
		return m.onSettled(msg)
	case renewedMsg:
		return m.onRenewed(msg)
	case sessionRenewedMsg:
		return m.onSessionRenewed(msg)
	case sessionReleasedMsg:
		if msg.err != nil && !errors.Is(msg.err, broker.ErrSessionLockLost) {
			m.setErr(msg.err)
		}
		return m.requestRefresh()
	case rulesMsg:
		m.entInfo.takeRules(msg)
		return nil
	case clientsMsg:
		m.clients.take(msg)
		return nil
	case closedClientMsg:
		return m.clients.onClosed(m, msg)
	case sessionStateMsg:
		m.detail.onSessionState(m, msg)
		return nil
	case historyMsg:
		m.detail.takeHistory(msg)
		return nil
	case sentMsg:
		return m.onSent(msg)
	case cancelledMsg:
		if msg.err != nil {
			m.setErr(msg.err)
		} else {
			m.setInfo(fmt.Sprintf("cancelled the scheduled sequence number(s) %s of %s", joinSeqs(msg.seqs), msg.entity))
		}
		return m.requestRefresh()
	case exportedMsg:
		return m.onExported(msg)
	case errMsg:
		m.setErr(msg.err)
		return nil
	case rememberedMsg:
		m.log.addErr(m.now, msg.err) // in the log only: nothing depends on it
		return nil
	case jobProgressMsg:
		return m.bulk.onProgress(m, msg)
	case searchStepMsg:
		return m.find.onStep(m, msg)
	case tea.KeyPressMsg:
		return m.onKey(msg)
	case tea.MouseClickMsg:
		return m.onClick(msg.Mouse())
	case tea.MouseWheelMsg:
		return m.onWheel(msg.Mouse())
	}
	// Other messages (cursor blinks, pastes) go to an open dialog's inputs.
	if m.dialog != nil {
		cmd := m.dialog.updateInputs(msg)
		if m.dialog.kind == dlgJump {
			m.dialog.updateJump(m)
		}
		return cmd
	}
	return nil
}

// resize takes a new screen size; the windows change size, so refresh.
func (m *Model) resize(w, h int) tea.Cmd {
	changed := w != m.width || h != m.height
	m.width, m.height = max(w, 20), max(h, 6)
	if m.dialog != nil {
		m.dialog.setWidth(m.width)
	}
	if !changed {
		return nil
	}
	m.detail.rerender(m)
	return m.requestRefresh()
}

// onEvents handles events from the endpoint: locks that expired or were
// lost flash, and the screen refreshes (debounced).
func (m *Model) onEvents(msg eventsMsg) tea.Cmd {
	var cmds []tea.Cmd
	if !msg.closed && m.events != nil {
		cmds = append(cmds, waitEvents(m.events))
	}
	relevant := false
	for _, ev := range msg.events {
		if ev.Missed > 0 {
			relevant = true
		}
		path, sub := broker.SplitAddress(ev.Entity)
		if sub == broker.SubQueueMain {
			sub = ev.SubQueue
		}
		if m.isSessionEvent(ev) {
			m.sessionEnded(ev.Kind == broker.EventLockExpired)
			relevant = true
			continue
		}
		if ev.Kind == broker.EventLockExpired || ev.Kind == broker.EventLockLost {
			kind := ui.FlashExpired
			if ev.Kind == broker.EventLockLost {
				kind = ui.FlashLost
			}
			k := heldKey{broker.SubQueueAddress(path, sub), ev.Sequence}
			if h := m.held[k]; h != nil && (ev.Token.IsZero() || h.msg.LockToken == ev.Token) {
				delete(m.held, k)
				m.addGhost(path, h.msg, kind)
				m.setInfo(fmt.Sprintf("lock on sequence number %d %s", ev.Sequence, map[string]string{ui.FlashExpired: "expired", ui.FlashLost: "was lost"}[kind]))
			} else if path == m.entity {
				if x := m.findLocked(ev.Sequence); x != nil {
					m.addGhost(path, x, kind)
				}
			}
		}
		relevant = true
	}
	if msg.closed {
		m.events = nil
	}
	if relevant {
		cmds = append(cmds, m.eventRefresh())
	}
	return tea.Batch(cmds...)
}

// findLocked returns the message with seq in the Locked window, or nil.
func (m *Model) findLocked(seq int64) *broker.Message {
	for _, x := range m.panes[lockedPane].rows {
		if x.SequenceNumber == seq {
			return x
		}
	}
	return nil
}

// needsFrame reports whether something on screen moves by itself: a lock
// countdown, a flash, bulk work.
func (m *Model) needsFrame() bool {
	if len(m.held) > 0 || len(m.ghosts) > 0 || m.bulk.job != nil || m.session != nil {
		return true
	}
	for _, s := range m.layout().Panes {
		for _, x := range m.panes[s.Index].rows {
			if !x.LockedUntil.IsZero() {
				return true
			}
		}
	}
	return m.detail != nil && !m.detail.msg.LockedUntil.IsZero()
}

// ensureFrame arms the animation frame when needed and not armed.
func (m *Model) ensureFrame() tea.Cmd {
	if m.sched.frameArmed || m.quitting || !m.needsFrame() {
		return nil
	}
	return after(m.clock, frameEvery, frameMsg{id: m.sched.armFrame()})
}

// joinSeqs writes sequence numbers as "13, 14".
func joinSeqs(seqs []int64) string {
	parts := make([]string, len(seqs))
	for i, s := range seqs {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ", ")
}
