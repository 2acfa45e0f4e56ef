package ui

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/peeklock/peeklock/themes"
)

// renderJSON pretty-prints a valid JSON document and highlights keys,
// strings, numbers and literals. The text is sanitised before it is styled,
// so the styling is the only escape sequence in the result.
func renderJSON(st *themes.Styles, body []byte) []string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(body), "", "  "); err != nil {
		return renderText(st, body)
	}
	text := SanitizeMultiline(buf.String())
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = highlightJSONLine(st, l)
	}
	return lines
}

// highlightJSONLine styles one line of indented JSON.
func highlightJSONLine(st *themes.Styles, l string) string {
	var b strings.Builder
	i := 0
	for i < len(l) {
		c := l[i]
		switch {
		case c == ' ':
			j := i
			for j < len(l) && l[j] == ' ' {
				j++
			}
			b.WriteString(l[i:j])
			i = j
		case c == '"':
			j := i + 1
			for j < len(l) {
				if l[j] == '\\' {
					j += 2
					continue
				}
				if l[j] == '"' {
					j++
					break
				}
				j++
			}
			j = min(j, len(l))
			tok := l[i:j]
			rest := strings.TrimLeft(l[j:], " ")
			if strings.HasPrefix(rest, ":") {
				b.WriteString(st.JSONKey.Render(tok))
			} else {
				b.WriteString(st.JSONString.Render(tok))
			}
			i = j
		case c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',':
			b.WriteString(st.JSONPunct.Render(string(c)))
			i++
		default:
			j := i
			for j < len(l) && !strings.ContainsRune(" ,:{}[]\"", rune(l[j])) {
				j++
			}
			if j == i {
				j++
			}
			tok := l[i:j]
			switch tok {
			case "true", "false", "null":
				b.WriteString(st.JSONLiteral.Render(tok))
			default:
				b.WriteString(st.JSONNumber.Render(tok))
			}
			i = j
		}
	}
	return b.String()
}
