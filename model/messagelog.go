package model

import (
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// maxLogEntries bounds the message log: the oldest entries give way.
const maxLogEntries = 1000

// messageLog is the message log: every status and error line, whole,
// shown over the whole screen from line top while open. It owns its
// state; the stack gives it the keys while it is open (a view, see
// overlay.go).
type messageLog struct {
	entries []ui.LogEntry
	open    bool
	top     int
}

// add keeps a status or error line at time at; the same line again right
// after the last one counts as a repeat.
func (l *messageLog) add(at time.Time, isErr bool, text, trackingID string) {
	if text == "" {
		return
	}
	if n := len(l.entries); n > 0 {
		last := &l.entries[n-1]
		if last.Text == text && last.Err == isErr && last.TrackingID == trackingID {
			last.Repeat++
			last.At = at
			return
		}
	}
	if len(l.entries) >= maxLogEntries {
		l.entries = append(l.entries[:0], l.entries[len(l.entries)-maxLogEntries+1:]...)
	}
	l.entries = append(l.entries, ui.LogEntry{At: at, Err: isErr, Text: text, TrackingID: trackingID})
}

// show opens the message log, scrolled to its end.
func (l *messageLog) show(c *ui.Common) {
	l.open = true
	l.top = l.maxTop(c)
}

// lines renders the message log's lines for this frame.
func (l *messageLog) lines(c *ui.Common) []string { return ui.LogLines(c, l.entries, c.Width) }

// maxTop is the last useful scroll position of the message log.
func (l *messageLog) maxTop(c *ui.Common) int { return max(0, len(l.lines(c))-(c.Height-3)) }

// update takes a key while the message log is open: it scrolls, and the
// log's key, esc or q close it.
func (l *messageLog) update(msg tea.KeyPressMsg, c *ui.Common) tea.Cmd {
	k := c.KeyMap
	if keymap.Pressed(msg, k.Log) || keymap.Pressed(msg, k.Back) || keymap.Pressed(msg, k.Quit) {
		l.open = false
		return nil
	}
	k.Scroll(msg, &l.top, l.maxTop(c), max(1, c.Height-3))
	return nil
}

// scroll moves the message log by d lines (the mouse wheel).
func (l *messageLog) scroll(c *ui.Common, d int) { l.top = max(0, min(l.maxTop(c), l.top+d)) }

// view draws the message log in exactly height lines of width cells.
func (l *messageLog) view(c *ui.Common, width, height int) []string {
	return ui.LogScreen(c, l.lines(c), l.top, width, height)
}

// id names the message log.
func (l *messageLog) id() overlay { return overLog }

// isOpen reports whether the message log is open.
func (l *messageLog) isOpen() bool { return l.open }

// modal is true: the message log keeps every key and click.
func (l *messageLog) modal() bool { return true }

// key scrolls or closes the message log.
func (l *messageLog) key(m *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	return l.update(msg, m.common()), true
}

// click takes every click, and does nothing.
func (l *messageLog) click(*Model, tea.Mouse) (tea.Cmd, bool) { return nil, true }

// wheel scrolls the message log.
func (l *messageLog) wheel(m *Model, _ tea.Mouse, delta int) (tea.Cmd, bool) {
	l.scroll(m.common(), delta)
	return nil, true
}

// close closes the message log.
func (l *messageLog) close(*Model) { l.open = false }

// frame draws the message log over the whole screen down to the help line.
func (l *messageLog) frame(_ *Model, c *ui.Common, s *ui.Screen) {
	s.Cover = l.view(c, s.Layout.Width, s.Layout.HelpLine.Y)
}

// addErr keeps err, with its tracking id, as an error line at time at.
func (l *messageLog) addErr(at time.Time, err error) {
	l.add(at, true, err.Error(), broker.TrackingIDOf(err))
}
