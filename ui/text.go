package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// fit truncates s (which may hold styling) to w cells, adding "…" when it
// cuts, and pads it with spaces to exactly w cells.
func fit(s string, w int) string {
	s, pad := truncate(s, w)
	return s + strings.Repeat(" ", pad)
}

// fitLeft is fit with the text aligned to the right edge.
func fitLeft(s string, w int) string {
	s, pad := truncate(s, w)
	return strings.Repeat(" ", pad) + s
}

// truncate cuts s to at most w cells, adding "…" when it cuts, and returns
// it with the cells still missing to w.
func truncate(s string, w int) (string, int) {
	if w <= 0 {
		return "", 0
	}
	sw, plain := width(s)
	switch {
	case sw <= w:
		return s, w - sw
	case plain:
		return s[:w-1] + "…", 0
	}
	return ansi.Truncate(s, w, "…"), 0
}

// width returns the cells s takes on screen and whether s is plain
// printable ASCII (one byte, one cell: the common case, measured without
// the grapheme and escape-sequence parser).
func width(s string) (int, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return ansi.StringWidth(s), false
		}
	}
	return len(s), true
}

// blank returns w spaces.
func blank(w int) string {
	if w <= 0 {
		return ""
	}
	return strings.Repeat(" ", w)
}

// padLines makes lines exactly h lines of exactly w cells each.
func padLines(lines []string, w, h int) []string {
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], w)
		} else {
			out[i] = blank(w)
		}
	}
	return out
}

// Overlay draws box (lines of equal width) over base, centred, keeping the
// parts of base to its left and right but the cell next to each side of
// the box, which it blanks. base must have lines of width w.
func Overlay(base []string, box []string, w int) []string {
	if len(box) == 0 {
		return base
	}
	bw := 0
	for _, l := range box {
		bw = max(bw, ansi.StringWidth(l))
	}
	bw = min(bw, w)
	x := max(0, (w-bw)/2)
	y := max(0, (len(base)-len(box))/2)
	out := append([]string(nil), base...)
	for i, l := range box {
		if y+i >= len(out) {
			break
		}
		row := out[y+i]
		// One blank cell on each side of the box, so that nothing of the
		// line underneath seems to belong to it.
		lm := min(x, 1)
		rm := min(w-x-bw, 1)
		left := ansi.Truncate(row, x-lm, "")
		right := ansi.TruncateLeft(row, x+bw+rm, "")
		out[y+i] = fit(left, x-lm) + blank(lm) + fit(l, bw) + blank(rm) + right
	}
	return out
}

// sectionTitle returns a blank line and the title of a section with a rule
// to the width.
func sectionTitle(c *Common, title string, w int) []string {
	rule := max(0, w-ansi.StringWidth(title)-4)
	return []string{"", c.Styles.Title.Render("── "+title+" ") + c.Styles.Border.Render(strings.Repeat("─", rule))}
}

// Wrap breaks s, plain text that is already sanitised, into lines of at
// most w cells: at spaces where it can, inside a word where it must, so that
// nothing is cut. A w below one returns s whole.
func Wrap(s string, w int) []string {
	if w < 1 {
		return []string{s}
	}
	if sw, _ := width(s); sw <= w {
		return []string{s}
	}
	lines := strings.Split(ansi.Wrap(s, w, ""), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}
