package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/peeklock/peeklock/broker"
)

// Screen is everything one frame shows. The model fills it from its state
// in View; Render draws it.
type Screen struct {
	Layout Layout
	// Entity list.
	Entities   []EntityRow
	EntityTop  int
	EntityNote string
	// Counts of the selected entity, for the tabs; Focus is the focused pane.
	Counts broker.Counts
	Focus  int
	// OtherDLQ and OtherDLQEntities are the dead-lettered messages of the
	// other entities and how many entities hold them: the tab line says so
	// when the entity list is not on screen.
	OtherDLQ         int64
	OtherDLQEntities int
	// Panes holds one state per slot of Layout.Panes, in the same order.
	Panes []PaneState
	// Help is the one-line key help (enabled bindings only).
	Help   []key.Binding
	Status Status
	// Detail view, drawn over the panes when DetailOpen.
	DetailOpen  bool
	DetailTitle string
	DetailLines []string
	DetailTop   int
	// Cover, when not nil, is a view drawn over the whole screen down to
	// the help line (the help screen, the message log): Layout.HelpLine.Y
	// lines, as HelpScreen and LogScreen draw them.
	Cover []string
	// Dialog, when not nil, is drawn over everything else.
	Dialog *Dialog
}

// Render draws the frame: exactly Layout.Height lines of Layout.Width cells.
func Render(c *Common, s Screen) string {
	l := s.Layout
	w, h := l.Width, l.Height
	lines := make([]string, h)
	for i := range lines {
		lines[i] = ""
	}
	// Sidebar.
	sep := c.Styles.Border.Render("│")
	var side []string
	if l.Sidebar.W > 0 {
		side = EntityList(c, s.Entities, s.EntityTop, l.Sidebar.W, l.Sidebar.H, s.EntityNote)
	}
	// Main area: tabs line, then panes or the detail view or help.
	main := make([]string, l.Sidebar.H)
	top := 0
	if l.Tabs.H > 0 {
		var notes []string
		if l.Sidebar.W == 0 && s.OtherDLQ > 0 {
			notes = append(notes, c.Styles.Error.Render(fmt.Sprintf("X %s in %d other", Count(s.OtherDLQ), s.OtherDLQEntities)),
				c.Styles.Error.Render("+X "+Count(s.OtherDLQ)))
		}
		main[0] = TabsWithNote(c, s.Counts, s.Focus, l.Tabs.W, notes...)
		top = 1
	}
	area := l.Main
	var body []string
	switch {
	case s.DetailOpen:
		body = Detail(c, s.DetailTitle, s.DetailLines, s.DetailTop, area.W, area.H)
	default:
		body = renderPanes(c, l, s.Panes)
	}
	copy(main[top:], body)
	for i := 0; i < l.Sidebar.H; i++ {
		m := main[i]
		if m == "" {
			m = blank(l.Tabs.W)
		}
		if l.Sidebar.W > 0 {
			lines[i] = side[i] + sep + m
		} else {
			lines[i] = m
		}
	}
	if s.Cover != nil {
		copy(lines[:l.HelpLine.Y], s.Cover)
	}
	lines[l.HelpLine.Y] = ShortHelp(c, s.Help, w)
	if l.HelpLine.Y < l.Status.Y {
		// A message too long for the status bar takes the key help's line.
		st := StatusLines(c, s.Status, w)
		copy(lines[l.Status.Y+1-len(st):], st)
	} else {
		lines[l.Status.Y] = StatusBar(c, s.Status, w)
	}
	if s.Dialog != nil {
		lines = Overlay(lines, DialogBox(c, *s.Dialog), w)
	}
	return strings.Join(lines, "\n")
}

// renderPanes draws the visible panes into the main area, column by column.
func renderPanes(c *Common, l Layout, panes []PaneState) []string {
	area := l.Main
	rows := make([]string, area.H)
	sep := c.Styles.Border.Render("│")
	for i, slot := range l.Panes {
		if i >= len(panes) {
			break
		}
		r := slot.Rect
		pl := Pane(c, panes[i], r.W, r.H)
		for k, line := range pl {
			y := r.Y - area.Y + k
			if y < 0 || y >= len(rows) {
				continue
			}
			if r.X > area.X {
				rows[y] += sep
			}
			rows[y] += line
		}
	}
	// The slots tile the area and every pane line is as wide as its slot,
	// so a row is area.W cells; only a row no pane covers is filled.
	for i := range rows {
		if rows[i] == "" {
			rows[i] = blank(area.W)
		}
	}
	return rows
}

// ShortHelp renders the one-line help from the enabled bindings, as many as
// fit in w cells.
func ShortHelp(c *Common, bindings []key.Binding, w int) string {
	st := c.Styles
	var b strings.Builder
	used := 0
	for _, kb := range bindings {
		if !kb.Enabled() {
			continue
		}
		h := kb.Help()
		item := h.Key + " " + h.Desc
		n := ansi.StringWidth(item)
		if used > 0 {
			n += 3
		}
		if used+n > w {
			break
		}
		if used > 0 {
			b.WriteString(st.HelpSep.Render(" · "))
		}
		b.WriteString(st.HelpKey.Render(h.Key) + " " + st.HelpDesc.Render(h.Desc))
		used += n
	}
	return fit(b.String(), w)
}
