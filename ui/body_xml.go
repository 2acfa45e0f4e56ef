package ui

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"github.com/peeklock/peeklock/themes"
)

// renderXML indents an XML document, one element per line; an element that
// holds only text stays on one line. Prefixes are kept as written.
func renderXML(st *themes.Styles, body []byte) ([]string, error) {
	// First check that the document is well-formed (Token checks nesting;
	// RawToken, which keeps prefixes as written, does not).
	check := xml.NewDecoder(bytes.NewReader(body))
	for {
		_, err := check.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	var lines []string
	depth := 0
	indent := func() string { return strings.Repeat("  ", depth) }
	var pending string // an open start tag waiting to see whether only text follows
	var pendingText string
	flush := func() {
		if pending != "" {
			lines = append(lines, indent()+pending)
			depth++
			pending = ""
		}
		if pendingText != "" {
			lines = append(lines, indent()+pendingText)
			pendingText = ""
		}
	}
	for {
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			flush()
			pending = st.JSONKey.Render("<"+xmlName(t.Name)) + xmlAttrs(st, t.Attr) + st.JSONKey.Render(">")
		case xml.EndElement:
			end := st.JSONKey.Render("</" + xmlName(t.Name) + ">")
			if pending != "" {
				lines = append(lines, indent()+pending+pendingText+end)
				pending, pendingText = "", ""
				continue
			}
			flush()
			depth = max(0, depth-1)
			lines = append(lines, indent()+end)
		case xml.CharData:
			text := strings.TrimSpace(string(t))
			if text == "" {
				continue
			}
			styled := st.Text.Render(Sanitize(text))
			if pending != "" && pendingText == "" {
				pendingText = styled
				continue
			}
			flush()
			lines = append(lines, indent()+styled)
		case xml.Comment:
			flush()
			lines = append(lines, indent()+st.Faint.Render("<!--"+Sanitize(string(t))+"-->"))
		case xml.ProcInst:
			flush()
			lines = append(lines, indent()+st.Faint.Render("<?"+Sanitize(t.Target+" "+string(t.Inst))+"?>"))
		case xml.Directive:
			flush()
			lines = append(lines, indent()+st.Faint.Render("<!"+Sanitize(string(t))+">"))
		}
	}
	flush()
	return lines, nil
}

func xmlName(n xml.Name) string {
	if n.Space != "" {
		return Sanitize(n.Space + ":" + n.Local)
	}
	return Sanitize(n.Local)
}

func xmlAttrs(st *themes.Styles, attrs []xml.Attr) string {
	var b strings.Builder
	for _, a := range attrs {
		b.WriteString(" ")
		b.WriteString(st.JSONNumber.Render(xmlName(a.Name)))
		b.WriteString(st.JSONPunct.Render("="))
		b.WriteString(st.JSONString.Render(`"` + Sanitize(a.Value) + `"`))
	}
	return b.String()
}
