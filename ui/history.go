package ui

import (
	"fmt"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// HistoryInfo is what the detail view knows of a message's history.
type HistoryInfo struct {
	// Kept says whether the endpoint keeps histories (the embedded
	// broker); History is the history once read, Err why it could not be.
	Kept    bool
	History *broker.History
	Err     string
	// Own is what this dashboard did to the message, oldest first: all
	// there is to show on an endpoint that keeps no history.
	Own []OwnAction
}

// OwnAction is something this dashboard did to a message.
type OwnAction struct {
	At   time.Time
	What string
}

// HistoryLines renders the History section of the detail view, w cells
// wide: one entry per event (time, what, by whom) with its particulars
// indented under it; on an endpoint that keeps no history, what this
// dashboard did. Everything that comes from clients is sanitized.
func HistoryLines(c *Common, info HistoryInfo, w int) []string {
	st := c.Styles
	var lines []string
	faint := func(s string) {
		for _, l := range Wrap(Sanitize(s), w) {
			lines = append(lines, st.Faint.Render(l))
		}
	}
	if !info.Kept {
		lines = append(lines, sectionTitle(c, "History", w)...)
		faint("This endpoint keeps no message history. What this dashboard did:")
		if len(info.Own) == 0 {
			faint("nothing yet")
		}
		for _, a := range info.Own {
			for _, l := range Wrap(Sanitize(a.At.UTC().Format("15:04:05")+"  "+a.What), w) {
				lines = append(lines, st.Text.Render(l))
			}
		}
		return lines
	}
	h := info.History
	switch {
	case info.Err != "":
		lines = append(lines, sectionTitle(c, "History", w)...)
		for _, l := range Wrap(Sanitize(info.Err), w) {
			lines = append(lines, st.Error.Render(l))
		}
		return lines
	case h == nil:
		lines = append(lines, sectionTitle(c, "History", w)...)
		faint("reading…")
		return lines
	}
	lines = append(lines, sectionTitle(c, fmt.Sprintf("History (%d events)", h.Folded+len(h.Events)), w)...)
	if h.Folded > 0 {
		faint(fmt.Sprintf("%d older events not kept", h.Folded))
	}
	for _, ev := range h.Events {
		head := ev.Time.UTC().Format("15:04:05.000") + "  " + ev.Kind.String() + "  by " + ev.Actor
		for _, l := range Wrap(Sanitize(head), w) {
			lines = append(lines, st.Text.Render(l))
		}
		if s := ev.Summary(); s != "" {
			for _, l := range Wrap(Sanitize(s), max(1, w-2)) {
				lines = append(lines, "  "+st.Faint.Render(l))
			}
		}
	}
	return lines
}
