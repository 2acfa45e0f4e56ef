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

// StatusBar renders the status bar in one line of w cells: the
// connection state, live or paused, the refresh interval, read-only, the
// session lock the dashboard holds, then the last error (with its tracking id) or a passing message, and the
// endpoint at the right, which gives way first when the line is short.
func StatusBar(c *Common, s Status, w int) string {
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
	var msg string
	switch {
	case s.Err != "":
		e := "✗ " + Sanitize(s.Err)
		if s.TrackingID != "" && !strings.Contains(s.Err, s.TrackingID) {
			e += " (TrackingId: " + Sanitize(s.TrackingID) + ")"
		}
		msg = st.StatusError.Render(e)
	case s.Info != "":
		msg = bar.Render(Sanitize(s.Info))
	case s.Notice != "":
		msg = st.StatusError.Render("⚠ " + Sanitize(s.Notice))
	}
	right := Sanitize(s.Endpoint)
	lw, mw := ansi.StringWidth(left), ansi.StringWidth(msg)
	room := w - lw - 2 // two spaces around the message
	if mw > room {
		hint := ""
		if s.LogKey != "" && room > 24 {
			hint = " " + s.LogKey + ": all"
		}
		msg = ansi.Truncate(msg, max(0, room-len(hint)), "…") + bar.Render(hint)
		mw = ansi.StringWidth(msg)
	}
	rw := w - lw - 2 - mw - 2
	out := left + bar.Render("  ") + msg
	if rw >= 8 {
		right = ansi.Truncate(right, rw, "…")
		gap := w - lw - 2 - mw - ansi.StringWidth(right) - 1
		out += bar.Render(blank(gap) + right + " ")
	}
	if ow := ansi.StringWidth(out); ow < w {
		out += bar.Render(blank(w - ow))
	}
	return ansi.Truncate(out, w, "")
}
