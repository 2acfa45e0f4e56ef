package ui

import (
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Connection states shown in the status bar.
const (
	ConnConnecting   = "connecting"
	ConnConnected    = "connected"
	ConnError        = "error"
	ConnDisconnected = "disconnected"
)

// Status is the content of the status bar.
type Status struct {
	Endpoint string
	// Conn is one of the Conn* states.
	Conn     string
	Refresh  time.Duration
	Paused   bool
	ReadOnly bool
	// Err is the last error, TrackingID its tracking id (may be empty).
	Err        string
	TrackingID string
	// Info is a passing message ("completed 3 messages").
	Info string
	// Notice is a lasting remark of the endpoint (e.g. entities cannot be
	// listed without Manage rights), shown when there is no error or info.
	Notice string
	// Session is the session lock the dashboard holds ("A 42s"), "" for
	// none.
	Session string
	// Zoomed says that the focused pane has the whole screen.
	Zoomed bool
	// Entity names the entity on screen, shown when the entity list is
	// not ("" otherwise).
	Entity string
	// LogKey is the key of the message log: a message cut at the edge ends
	// with a hint to it.
	LogKey string
}

// StatusBar renders the status bar in one line of w cells (see
// StatusLines; a message that needs two is cut, ending with a hint to the
// message log).
func StatusBar(c *Common, s Status, w int) string {
	lines := statusLines(c, s, w, 1)
	return lines[len(lines)-1]
}

// StatusLines renders the status bar in one line of w cells, or two when
// its message does not fit in one: the connection state, live or paused,
// the refresh interval, read-only, the session lock the dashboard holds,
// then the last error (with its tracking id) or a passing message, and the
// endpoint at the right, which gives way first. A message too long for one
// line goes on in the second (which the caller draws over the key help
// above the status bar: the first of the two is the upper one); only one
// too long for both is cut, ending with a hint to the message log.
func StatusLines(c *Common, s Status, w int) []string {
	return statusLines(c, s, w, 2)
}

func statusLines(c *Common, s Status, w, most int) []string {
	st := c.Styles
	bar := st.StatusBar
	conn := s.Conn
	if conn == "" {
		conn = ConnConnecting
	}
	connStyle := st.StatusKey
	if conn != ConnConnected {
		connStyle = st.StatusError
	}
	mode := "LIVE"
	if s.Paused {
		mode = "PAUSED"
	}
	left := connStyle.Render(" ● "+conn+" ") + st.StatusKey.Render(mode) + bar.Render(" ⟳ "+Short(s.Refresh))
	if s.ReadOnly {
		left += st.StatusKey.Render(" READ-ONLY")
	}
	if s.Zoomed {
		left += st.StatusKey.Render(" ZOOM")
	}
	if s.Entity != "" {
		left += st.StatusKey.Render(" " + Sanitize(s.Entity))
		if lw := ansi.StringWidth(left); lw > w*2/3 {
			left = ansi.Truncate(left, w*2/3, "…")
		}
	}
	if s.Session != "" {
		left += st.StatusKey.Render(" SESSION " + Sanitize(s.Session))
	}
	var text string
	msgStyle := bar
	switch {
	case s.Err != "":
		text = "✗ " + Sanitize(s.Err)
		if s.TrackingID != "" && !strings.Contains(s.Err, s.TrackingID) {
			text += " (TrackingId: " + Sanitize(s.TrackingID) + ")"
		}
		msgStyle = st.StatusError
	case s.Info != "":
		text = Sanitize(s.Info)
	case s.Notice != "":
		text = "⚠ " + Sanitize(s.Notice)
		msgStyle = st.StatusError
	}
	right := Sanitize(s.Endpoint)
	lw := ansi.StringWidth(left)
	room := w - lw - 2 // two spaces around the message
	hint := ""
	if s.LogKey != "" {
		hint = " " + s.LogKey + ": all"
	}
	if tw, _ := width(text); tw > room && most > 1 && room > 0 {
		head, rest := splitWords(text, room)
		second := w - 2
		if rw, _ := width(rest); rw > second {
			rest = ansi.Truncate(rest, max(0, second-len(hint)), "…") + hint
		}
		top := left + bar.Render("  ") + msgStyle.Render(head)
		low := bar.Render(" ") + msgStyle.Render(rest)
		return []string{padBar(c, top, "", w, 1), padBar(c, low, right, w, 3)}
	}
	msg := ""
	if text != "" {
		msg = msgStyle.Render(text)
	}
	if mw := ansi.StringWidth(msg); mw > room {
		h := ""
		if room > 24 {
			h = hint
		}
		msg = ansi.Truncate(msg, max(0, room-len(h)), "…") + bar.Render(h)
	}
	return []string{padBar(c, left+bar.Render("  ")+msg, right, w, 1)}
}

// padBar fills a status bar line to w cells, with right at its right edge,
// at least gap cells from the text, when at least 8 cells are left for it.
func padBar(c *Common, out, right string, w, gap int) string {
	bar := c.Styles.StatusBar
	ow := ansi.StringWidth(out)
	if rw := w - ow - 1 - gap; rw >= 8 && right != "" {
		right = ansi.Truncate(right, rw, "…")
		gap := w - ow - ansi.StringWidth(right) - 1
		out += bar.Render(blank(gap) + right + " ")
	}
	if ow := ansi.StringWidth(out); ow < w {
		out += bar.Render(blank(w - ow))
	}
	return ansi.Truncate(out, w, "")
}

// splitWords cuts plain text after at most w cells, at a space where it
// can: head fits in w, rest is the remainder without its leading spaces.
func splitWords(text string, w int) (head, rest string) {
	lines := Wrap(text, w)
	head = lines[0]
	if !strings.HasPrefix(text, head) {
		head = ansi.Truncate(text, w, "")
	}
	return head, strings.TrimLeft(text[len(head):], " ")
}
