package ui

import (
	"fmt"
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/themes"
)

// renderSections renders a body that its sender framed as several AMQP
// data sections: each section under a marker line that numbers it and
// gives its size and format, so that the cuts the sender made stay visible
// (a user debugging a message wants to see both the pieces and where one
// ends). Each section is rendered on its own by the message's content type,
// as a body would be; an empty section says so. The sections share one
// body's budget (maxRenderBytes, maxBodyLines): what is past it is counted
// on a last line. The format returned is that of the first section.
func renderSections(st *themes.Styles, contentType string, sections [][]byte) (BodyFormat, []string) {
	var lines []string
	first := FormatHex
	budget := maxRenderBytes
	for i, sec := range sections {
		if i > 0 && (budget <= 0 || len(lines) >= maxBodyLines) {
			rest := 0
			for _, s := range sections[i:] {
				rest += len(s)
			}
			lines = append(lines, st.Faint.Render(fmt.Sprintf("… %d more data sections (%s) not shown", len(sections)-i, Bytes(int64(rest)))))
			break
		}
		f, body := renderPayload(st, contentType, broker.BodyData, sec, max(budget, 0))
		if i == 0 {
			first = f
		}
		kind := f.String()
		if len(sec) == 0 {
			kind, body = "empty", nil
		}
		lines = append(lines, sectionMarker(st, i, len(sections), len(sec), kind))
		lines = append(lines, body...)
		budget -= len(sec)
	}
	return first, lines
}

// sectionMarker is the line above data section i of n.
func sectionMarker(st *themes.Styles, i, n, size int, format string) string {
	label := fmt.Sprintf("data section %d of %d · %s · %s", i+1, n, Bytes(int64(size)), format)
	return st.Border.Render("┄┄ ") + st.Label.Render(label) + st.Border.Render(" "+strings.Repeat("┄", 6))
}
