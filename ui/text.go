package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// fit truncates s (which may hold styling) to w cells, adding "…" when it
// cuts, and pads it with spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	if sw < w {
		return s + strings.Repeat(" ", w-sw)
	}
	return s
}

// fitLeft is fit with the text aligned to the right edge.
func fitLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	return strings.Repeat(" ", w-sw) + s
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
// parts of base to its left and right. base must have lines of width w.
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
		left := ansi.Truncate(row, x, "")
		right := ansi.TruncateLeft(row, x+bw, "")
		out[y+i] = fit(left, x) + fit(l, bw) + right
	}
	return out
}
