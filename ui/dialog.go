package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/peeklock/peeklock/keymap"
)

// Dialog is a box drawn over the screen: a prompt, a confirmation, a
// report.
type Dialog struct {
	Title string
	// Lines are the content, already styled (input fields are drawn by their
	// bubbles components). Text from messages must be sanitised by the
	// caller.
	Lines []string
	// Error is shown in the danger colour under the content.
	Error string
	// Footer is the key hint line ("enter send · esc cancel").
	Footer string
	// Width is the inner width wanted; the screen may make it smaller.
	Width int
}

// DialogBox renders d as lines of equal width for Overlay.
func DialogBox(c *Common, d Dialog) []string {
	st := c.Styles
	inner := d.Width
	if inner <= 0 {
		inner = 50
	}
	inner = min(inner, max(10, c.Width-DialogMargin))
	var body []string
	for _, l := range Wrap(Sanitize(d.Title), inner) {
		body = append(body, st.DialogTitle.Render(l))
	}
	for _, l := range d.Lines {
		body = append(body, wrapStyled(l, inner)...)
	}
	if d.Error != "" {
		for _, l := range Wrap(Sanitize(d.Error), inner) {
			body = append(body, st.Error.Render(l))
		}
	}
	if d.Footer != "" {
		body = append(body, "")
		for _, l := range Wrap(d.Footer, inner) {
			body = append(body, st.Faint.Render(l))
		}
	}
	if most := c.Height - 2; most > 0 && len(body) > most {
		// Too tall for the screen: the content gives way in the middle,
		// marked, so that the title, the error and the keys stay.
		cut := len(body) - most + 1
		from := max(1, (len(body)-cut)/2)
		body = append(append(body[:from:from], st.Faint.Render("…")), body[from+cut:]...)
	}
	for i, l := range body {
		body[i] = fit(l, inner)
	}
	box := st.DialogBox.Render(strings.Join(body, "\n"))
	return strings.Split(box, "\n")
}

// DialogMargin is how many cells of the screen's width a dialog leaves
// free: its border and padding, and a blank cell beside it on each side.
const DialogMargin = 6

// wrapStyled breaks a styled line into lines of at most w cells, at spaces
// where it can, keeping its styles.
func wrapStyled(s string, w int) []string {
	if sw, _ := width(s); sw <= w {
		return []string{s}
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}

// Progress is the state of bulk work for its progress box.
type Progress struct {
	Title        string
	Done, Failed int
	// Total is the number of items; 0 while unknown (a whole queue).
	Total int
	// Elapsed is the time since the work began.
	Elapsed   time.Duration
	Cancelled bool
}

// ProgressBar renders a bar of w cells filled to frac (0..1).
func ProgressBar(c *Common, frac float64, w int) string {
	if w <= 0 {
		return ""
	}
	frac = min(max(frac, 0), 1)
	full := int(frac*float64(w) + 0.5)
	return c.Styles.Success.Render(strings.Repeat("█", full)) + c.Styles.CountdownTrack.Render(strings.Repeat("░", w-full))
}

// ProgressDialog renders the progress of bulk work: a bar, the count, the
// rate and the time left.
func ProgressDialog(c *Common, p Progress) Dialog {
	inner := min(60, max(20, c.Width-8))
	n := p.Done + p.Failed
	rate := 0.0
	if p.Elapsed > 0 {
		rate = float64(n) / p.Elapsed.Seconds()
	}
	count := fmt.Sprintf("%d", n)
	left := "unknown"
	frac := 0.0
	if p.Total > 0 {
		count += fmt.Sprintf(" of %d", p.Total)
		frac = float64(n) / float64(p.Total)
		if rate > 0 {
			left = Short(time.Duration(float64(p.Total-n) / rate * float64(time.Second)))
		}
	}
	lines := []string{
		ProgressBar(c, frac, inner),
		fmt.Sprintf("%s done, %d failed  %.1f/s  %s left", count, p.Failed, rate, left),
	}
	footer := "esc cancel"
	if p.Cancelled {
		footer = "cancelling…"
	}
	return Dialog{Title: p.Title, Lines: lines, Footer: footer, Width: inner}
}

// HelpLines returns the lines of the help screen for width w: every
// binding of the key map in its groups, with the reason next to the ones
// that do not work now (why returns "" for keys that work). Wide screens
// get two columns.
func HelpLines(c *Common, why func(*key.Binding) string, w int) []string {
	st := c.Styles
	cw := w // the width of a column
	if w >= 100 {
		cw = w/2 - 1
	}
	const keyW = 12
	descW := max(10, cw-keyW-3) // "  key… desc": the description wraps under itself
	var cols [][]string
	for gi, g := range c.KeyMap.Groups() {
		col := []string{st.Header.Render(keymap.Group(gi).String())}
		for _, b := range g {
			if len(b.Keys()) == 0 {
				continue
			}
			h := b.Help()
			desc, style := h.Desc, st.HelpDesc
			if r := why(b); r != "" {
				desc, style = h.Desc+" — "+Sanitize(r), st.Faint
			}
			for i, part := range Wrap(desc, descW) {
				lead := "  " + st.HelpKey.Render(fit(h.Key, keyW)) + " "
				if i > 0 {
					lead = blank(keyW + 3)
				}
				col = append(col, lead+style.Render(part))
			}
		}
		cols = append(cols, append(col, ""))
	}
	head := st.Title.Render("Keys") + st.Faint.Render(fit("  ↑/↓ scroll · ? or esc close", max(0, w-4)))
	legend := []string{st.Header.Render("Legend")}
	for _, l := range Legend {
		for i, part := range Wrap(l, max(10, w-4)) {
			if i > 0 {
				part = "  " + part
			}
			legend = append(legend, "  "+st.HelpDesc.Render(part))
		}
	}
	if w < 100 {
		lines := []string{head, ""}
		for _, col := range cols {
			lines = append(lines, col...)
		}
		return append(lines, legend...)
	}
	// Two columns: groups 1–2 on the left, 3–4 on the right.
	left := append(append([]string{}, cols[0]...), cols[1]...)
	right := append(append([]string{}, cols[2]...), cols[3]...)
	lines := []string{head, ""}
	half := w / 2
	for i := 0; i < max(len(left), len(right)); i++ {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		lines = append(lines, fit(l, half)+fit(r, w-half))
	}
	return append(lines, legend...)
}

// Legend explains the marks and columns of the screen, for the help
// screen.
var Legend = []string{
	"Row marks: ▸ the cursor · ◆ locked by this dashboard (c, a, d, f settle it) · ↻ locked here and auto-renewed (R) · ● selected (space)",
	"Entity list: A active · L locked · D deferred · S scheduled · X dead-lettered (the transfer dead-letter queue included) · Σ all of them · depth: Σ over the last five minutes",
	"Tabs: the panes (1–5) with their counts; DLQ is the Dead-lettered pane; \"X n in k other\" counts the dead-lettered messages of the other entities when the list is hidden",
	"Pane columns: DC is the delivery count (failed deliveries + 1, as the SDKs show it); Lock is the time left on a lock",
}

// HelpScreen draws the help lines from top in exactly h lines of w cells.
func HelpScreen(c *Common, why func(*key.Binding) string, top, w, h int) []string {
	lines := HelpLines(c, why, w)
	top = max(0, min(top, len(lines)-h))
	return padLines(lines[top:], w, h)
}
