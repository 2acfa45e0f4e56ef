package ui

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/themes"
)

// BodyFormat is how a body is rendered.
type BodyFormat uint8

// Body formats.
const (
	FormatHex BodyFormat = iota
	FormatJSON
	FormatXML
	FormatText
	FormatAMQP
	FormatAvro
)

// String returns the format's name as shown above the body.
func (f BodyFormat) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatXML:
		return "xml"
	case FormatText:
		return "text"
	case FormatAMQP:
		return "amqp"
	case FormatAvro:
		return "avro"
	}
	return "hex"
}

// Limits of body rendering: the detail view never renders more than this,
// whatever the size of the message.
const (
	maxRenderBytes = 256 << 10
	maxHexBytes    = 16 << 10
	maxBodyLines   = 4000
)

// avroMagic starts every Avro object container file.
var avroMagic = []byte{'O', 'b', 'j', 1}

// DetectFormat decides how to render a body: AMQP value and sequence bodies
// are trees; data bodies go by content type (JSON, XML, Avro, text), then by
// content when the type says nothing useful; anything else is a hex dump.
func DetectFormat(contentType string, kind broker.BodyKind, body []byte) BodyFormat {
	if kind == broker.BodyValue || kind == broker.BodySequence {
		return FormatAMQP
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	switch {
	case mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json"):
		if json.Valid(body) {
			return FormatJSON
		}
		return textOrHex(body)
	case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
		return FormatXML
	case mt == "avro/binary" || mt == "application/avro" || mt == "avro/bytes" ||
		mt == "application/vnd.apache.avro+binary" || bytes.HasPrefix(body, avroMagic):
		if bytes.HasPrefix(body, avroMagic) {
			return FormatAvro
		}
		return FormatHex
	case strings.HasPrefix(mt, "text/"), params["charset"] != "":
		return textOrHex(body)
	case mt == "" || mt == "application/octet-stream":
		trimmed := bytes.TrimSpace(body)
		if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
			return FormatJSON
		}
		if len(trimmed) > 0 && trimmed[0] == '<' && utf8.Valid(trimmed) {
			return FormatXML
		}
		if mt == "" {
			return textOrHex(body)
		}
	}
	return FormatHex
}

// textOrHex returns FormatText for printable UTF-8 and FormatHex otherwise.
func textOrHex(b []byte) BodyFormat {
	if !utf8.Valid(b) {
		return FormatHex
	}
	bad := 0
	for _, r := range string(b) {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' && r != 0x1b {
			bad++
		}
	}
	if bad*20 > len(b) {
		return FormatHex
	}
	return FormatText
}

// RenderBody renders a message body for the detail view as lines no wider
// than w, already sanitised and styled, and returns the format used. A body
// that does not decode as its format says falls back to text or hex with a
// note on the first line.
//
// A body of several data sections is rendered section by section (see
// renderSections); the format returned is then that of the first section.
func RenderBody(st *themes.Styles, m *broker.Message, w int) (BodyFormat, []string) {
	if m.BodyKind == broker.BodyData && len(m.DataSections) > 1 {
		if sections := m.Sections(); len(sections) > 1 {
			f, lines := renderSections(st, m.ContentType, sections)
			return f, wrapLines(lines, w)
		}
	}
	f, lines := renderPayload(st, m.ContentType, m.BodyKind, m.Body, maxRenderBytes)
	return f, wrapLines(lines, w)
}

// renderPayload renders one body, or one data section, of the given kind
// and content type, of which it renders at most limit bytes (AMQP trees and
// Avro containers, which a cut would break, are rendered whole). The lines
// are styled and sanitised but not wrapped.
func renderPayload(st *themes.Styles, contentType string, kind broker.BodyKind, body []byte, limit int) (BodyFormat, []string) {
	truncated := 0
	f := DetectFormat(contentType, kind, body)
	if f != FormatAMQP && f != FormatAvro && len(body) > limit {
		truncated = len(body) - limit
		body = body[:limit]
		if f == FormatJSON {
			f = FormatText // a cut JSON document is no longer valid
		}
	}
	var lines []string
	var note string
	switch f {
	case FormatJSON:
		lines = renderJSON(st, body)
	case FormatXML:
		var err error
		lines, err = renderXML(st, body)
		if err != nil {
			note = "not well-formed XML (" + err.Error() + "); shown as text"
			f = FormatText
			lines = renderText(st, body)
		}
	case FormatText:
		lines = renderText(st, body)
	case FormatAMQP:
		var err error
		lines, err = renderAMQP(st, kind, body)
		if err != nil {
			note = "AMQP body does not decode (" + err.Error() + "); shown as hex"
			f = FormatHex
			lines = renderHex(st, body)
		}
	case FormatAvro:
		var err error
		lines, err = renderAvro(st, body)
		if err != nil {
			note = "Avro container does not decode (" + err.Error() + "); shown as hex"
			f = FormatHex
			lines = renderHex(st, body)
		}
	default:
		lines = renderHex(st, body)
	}
	if note != "" {
		lines = append([]string{st.Warning.Render(Sanitize(note))}, lines...)
	}
	if truncated > 0 {
		lines = append(lines, st.Faint.Render("… "+Bytes(int64(truncated))+" more not shown"))
	}
	return f, lines
}

// wrapLines hard-wraps styled lines at w cells and caps their number.
func wrapLines(lines []string, w int) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if w > 0 && ansi.StringWidth(l) > w {
			out = append(out, strings.Split(ansi.Hardwrap(l, w, true), "\n")...)
		} else {
			out = append(out, l)
		}
		if len(out) >= maxBodyLines {
			out = append(out[:maxBodyLines], "…")
			break
		}
	}
	return out
}

// renderText renders a text body line by line.
func renderText(st *themes.Styles, body []byte) []string {
	s := SanitizeMultiline(strings.ToValidUTF8(string(body), "\uFFFD"))
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = st.Text.Render(l)
	}
	return lines
}

// renderHex renders a hex dump of at most maxHexBytes.
func renderHex(st *themes.Styles, body []byte) []string {
	more := 0
	if len(body) > maxHexBytes {
		more = len(body) - maxHexBytes
		body = body[:maxHexBytes]
	}
	if len(body) == 0 {
		return []string{st.Faint.Render("(empty body)")}
	}
	dump := strings.TrimRight(hex.Dump(body), "\n")
	lines := strings.Split(SanitizeMultiline(dump), "\n")
	for i, l := range lines {
		lines[i] = st.Text.Render(l)
	}
	if more > 0 {
		lines = append(lines, st.Faint.Render("… "+Bytes(int64(more))+" more"))
	}
	return lines
}
