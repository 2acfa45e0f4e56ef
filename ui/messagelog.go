package ui

import (
	"fmt"
	"strings"
	"time"
)

// LogEntry is one line of the message log: a status or error line of the
// status bar, kept whole.
type LogEntry struct {
	At time.Time
	// Err marks an error; TrackingID is its tracking id, if any.
	Err        bool
	Text       string
	TrackingID string
	// Repeat counts the times the same line came again right after.
	Repeat int
}

// logIndent is where the text of a log line starts, after its time.
const logIndent = 11

// LogLines renders the message log in w cells, oldest first: each entry
// with its time (UTC), a mark for errors, its text sanitised and wrapped,
// never cut.
func LogLines(c *Common, entries []LogEntry, w int) []string {
	st := c.Styles
	var lines []string
	for _, e := range entries {
		text := Sanitize(e.Text)
		if e.TrackingID != "" && !strings.Contains(e.Text, e.TrackingID) {
			text += " (TrackingId: " + Sanitize(e.TrackingID) + ")"
		}
		if e.Repeat > 0 {
			text += fmt.Sprintf(" (×%d)", e.Repeat+1)
		}
		mark, style := "  ", st.Text
		if e.Err {
			mark, style = "✗ ", st.Error
		}
		for i, part := range Wrap(mark+text, max(10, w-logIndent)) {
			head := blank(logIndent)
			if i == 0 {
				head = st.Faint.Render(fit(e.At.UTC().Format("15:04:05"), logIndent))
			}
			lines = append(lines, head+style.Render(part))
		}
	}
	if len(lines) == 0 {
		lines = append(lines, st.Faint.Render("nothing yet: status lines and errors are kept here"))
	}
	return lines
}

// LogScreen draws the message log from line top in exactly h lines of w
// cells, under a title line.
func LogScreen(c *Common, lines []string, top, w, h int) []string {
	st := c.Styles
	if h <= 0 {
		return nil
	}
	top = max(0, min(top, len(lines)-(h-1)))
	title := st.Title.Render("Message log") + st.Faint.Render(fmt.Sprintf("  %d lines · ↑/↓ scroll · m or esc close", len(lines)))
	out := append([]string{title}, lines[top:]...)
	return padLines(out, w, h)
}
