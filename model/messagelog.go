package model

import (
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// maxLogEntries bounds the message log: the oldest entries give way.
const maxLogEntries = 1000

// logLine keeps a status or error line in the message log; the same line
// again right after the last one counts as a repeat.
func (m *Model) logLine(isErr bool, text, trackingID string) {
	if text == "" {
		return
	}
	if n := len(m.log); n > 0 {
		last := &m.log[n-1]
		if last.Text == text && last.Err == isErr && last.TrackingID == trackingID {
			last.Repeat++
			last.At = m.now
			return
		}
	}
	if len(m.log) >= maxLogEntries {
		m.log = append(m.log[:0], m.log[len(m.log)-maxLogEntries+1:]...)
	}
	m.log = append(m.log, ui.LogEntry{At: m.now, Err: isErr, Text: text, TrackingID: trackingID})
}

// logErr keeps err in the message log.
func (m *Model) logErr(err error) { m.logLine(true, err.Error(), broker.TrackingIDOf(err)) }

// openLog shows the message log, scrolled to its end.
func (m *Model) openLog() tea.Cmd {
	m.showLog = true
	m.logTop = m.logMaxTop()
	return nil
}

// logView renders the message log's lines for this frame.
func (m *Model) logView() []string { return ui.LogLines(m.common(), m.log, m.width) }

// logMaxTop is the last useful scroll position of the message log.
func (m *Model) logMaxTop() int { return max(0, len(m.logView())-(m.height-3)) }

// logKey handles a key while the message log is open: it scrolls, and the
// log's key, esc or q close it.
func (m *Model) logKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	if keymap.Pressed(msg, k.Log) || keymap.Pressed(msg, k.Back) || keymap.Pressed(msg, k.Quit) {
		m.showLog = false
		return nil
	}
	k.Scroll(msg, &m.logTop, m.logMaxTop(), max(1, m.height-3))
	return nil
}
