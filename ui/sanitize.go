package ui

import (
	"strings"
	"unicode/utf8"
)

// Sanitize makes s safe to print on one terminal line: it is the single gate
// through which message bodies and properties reach the screen. Escape
// sequences and control characters are neutralised by making them visible
// instead of passing them through:
//
//   - ESC becomes "␛", so CSI, OSC (52 clipboard writes, 8 hyperlinks, titles),
//     DCS and lone ESCs lose their introducer and print as plain text;
//   - other C0 controls and DEL become their Unicode control pictures
//     (NUL "␀", BEL "␇", CR "␍", …, DEL "␡"); a newline becomes "↵" and a tab a
//     space;
//   - C1 controls (U+0080–U+009F, among them the one-character CSI U+009B and
//     OSC U+009D) become "\x9b"-style text;
//   - bidirectional overrides, embeddings, isolates and marks become
//     "<U+202E>"-style text, so they cannot reorder what follows;
//   - line and paragraph separators become "↵"; invalid UTF-8 becomes U+FFFD.
func Sanitize(s string) string { return sanitize(s, false) }

// SanitizeMultiline is Sanitize for text shown over several lines: newlines
// are kept ("\r\n" counts as one), tabs expand to the next multiple of four
// columns, and everything else is neutralised as by Sanitize.
func SanitizeMultiline(s string) string { return sanitize(s, true) }

// safe reports whether s needs no change, so the common case allocates
// nothing.
func safe(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			if multiline && c == '\n' {
				continue
			}
			return false
		}
		if c >= 0x80 {
			return false // decide rune by rune
		}
	}
	return true
}

func sanitize(s string, multiline bool) string {
	if safe(s, multiline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	col := 0 // column within the current line, for tab stops
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune('\uFFFD')
			col++
		case r == '\n':
			if multiline {
				b.WriteByte('\n')
				col = 0
			} else {
				b.WriteString("↵")
				col++
			}
		case r == '\r':
			if multiline && i < len(s) && s[i] == '\n' {
				continue // CRLF: the LF ends the line
			}
			b.WriteRune('␍')
			col++
		case r == '\t':
			if multiline {
				n := 4 - col%4
				b.WriteString("    "[:n])
				col += n
			} else {
				b.WriteByte(' ')
				col++
			}
		case r == 0x1b:
			b.WriteRune('␛')
			col++
		case r < 0x20:
			b.WriteRune(0x2400 + r)
			col++
		case r == 0x7f:
			b.WriteRune('␡')
			col++
		case r >= 0x80 && r <= 0x9f:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
			col += 4
		case isBidiControl(r):
			b.WriteString("<U+")
			const hex = "0123456789ABCDEF"
			b.WriteByte(hex[(r>>12)&0xf])
			b.WriteByte(hex[(r>>8)&0xf])
			b.WriteByte(hex[(r>>4)&0xf])
			b.WriteByte(hex[r&0xf])
			b.WriteByte('>')
			col += 8
		case r == '\u2028' || r == '\u2029' || r == '\u0085':
			b.WriteString("↵")
			col++
		default:
			b.WriteRune(r)
			col++
		}
	}
	return b.String()
}

// isBidiControl reports whether r changes the direction of text around it:
// the explicit embeddings and overrides (U+202A–U+202E), the isolates
// (U+2066–U+2069) and the implicit marks (LRM, RLM, ALM).
func isBidiControl(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}
