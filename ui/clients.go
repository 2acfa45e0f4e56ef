package ui

import (
	"fmt"
	"strconv"

	"github.com/peeklock/peeklock/broker"
)

// Clients is what the connected clients view shows.
type Clients struct {
	// Conns are the connections, oldest first.
	Conns []broker.ClientConn
	// Loaded is false until the first list arrives.
	Loaded bool
	// Err is why the last list could not be read ("" when it could).
	Err string
	// Closable marks the Selected connection (an index into Conns): the
	// one the close key would close; Hint, under the summary, says which
	// keys select and close.
	Closable bool
	Selected int
	Hint     string
}

// starvedNote explains the flag of a receiver with no credit while
// messages wait.
const starvedNote = "no credit while messages wait: the client is not asking for messages (likely why it gets nothing)"

// ClientsLines renders the connected clients view, w cells wide: a summary,
// then per connection its remote address, user (key name), container id,
// age, and its links (role, entity, credit, unsettled deliveries, messages
// moved), a starved receiver flagged. Every text that comes from a client
// passes through Sanitize. With Closable, the selected connection's title
// is marked ▸. starts holds, per connection, the index of its title line.
// Pure: the model renders it when the list or the width changes and slices
// it per frame.
func ClientsLines(c *Common, v Clients, w int) (lines []string, starts []int) {
	st := c.Styles
	w = max(w, 1)
	text := func(style func(...string) string, s string) {
		for _, l := range wrapText(s, w) {
			lines = append(lines, style(l))
		}
	}
	// item renders s after prefix (two cells), its continuation lines
	// indented under it.
	item := func(style func(...string) string, prefix, s string) {
		for i, l := range wrapText(s, max(1, w-4)) {
			if i == 0 {
				lines = append(lines, style(prefix+l))
			} else {
				lines = append(lines, style("    "+l))
			}
		}
	}
	nLinks, nStarved := 0, 0
	for _, cc := range v.Conns {
		nLinks += len(cc.Links)
		for _, l := range cc.Links {
			if l.Starved() {
				nStarved++
			}
		}
	}
	text(st.Title.Render, fmt.Sprintf("%d connection(s), %d link(s)", len(v.Conns), nLinks))
	if nStarved > 0 {
		text(st.Warning.Render, fmt.Sprintf("⚠ %d receiver(s) with no credit while messages wait", nStarved))
	}
	switch {
	case v.Err != "":
		text(st.Error.Render, Sanitize(v.Err))
	case !v.Loaded:
		text(st.Faint.Render, "loading…")
	case len(v.Conns) == 0:
		text(st.Faint.Render, "no client is connected to the AMQP listener")
	}
	if v.Closable && len(v.Conns) > 0 && v.Hint != "" {
		text(st.Faint.Render, v.Hint)
	}
	for i, cc := range v.Conns {
		title := Sanitize(cc.Remote)
		if v.Closable && i == v.Selected {
			title = "▸ " + title
		}
		starts = append(starts, len(lines)+1) // after the blank line
		lines = append(lines, sectionTitle(c, title, w)...)
		user := Sanitize(cc.User)
		if user == "" {
			user = "-"
		}
		auth := ""
		if !cc.Authenticated {
			auth = ", not authenticated"
		}
		text(st.Text.Render, "user "+user+auth+" · connected "+Age(c.Now, cc.ConnectedAt)+" ago")
		if cc.ContainerID != "" {
			text(st.Faint.Render, "container "+Sanitize(cc.ContainerID))
		}
		if len(cc.Links) == 0 {
			text(st.Faint.Render, "no links")
		}
		for _, l := range cc.Links {
			role := "send   "
			if l.Receiver {
				role = "receive"
			}
			s := role + " " + Sanitize(l.Entity) + "  credit " + strconv.FormatUint(uint64(l.Credit), 10) +
				" · unsettled " + strconv.Itoa(l.Unsettled) + " · moved " + strconv.FormatUint(l.Moved, 10)
			if l.Starved() {
				item(st.Warning.Render, "⚠ ", s+" · waiting "+Count(l.Waiting))
				item(st.Warning.Render, "  ", starvedNote)
				continue
			}
			item(st.Text.Render, "  ", s)
		}
	}
	return lines, starts
}
