package atom

import (
	"encoding/xml"
	"strconv"
	"strings"
)

// Error is the body of every failure: <Error><Code>404</Code><Detail>...
// TrackingId:..., SystemTracker:..., Timestamp:...</Detail></Error>.
type Error struct {
	// XMLName is the element as read.
	XMLName xml.Name
	Code    int    `xml:"Code"`
	Detail  string `xml:"Detail"`
}

// Marshal writes the error document after the XML declaration, its Detail
// escaped as Service Bus does: only what XML requires (&, <, >), so quotes
// stay as written and the SDKs' checks of the text find them; characters
// XML cannot hold become U+FFFD.
func (e Error) Marshal() []byte {
	var b strings.Builder
	b.WriteString(xml.Header)
	b.WriteString("<Error><Code>")
	b.WriteString(strconv.Itoa(e.Code))
	b.WriteString("</Code><Detail>")
	for _, r := range e.Detail {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r != 0xFFFE && r != 0xFFFF && (r < 0xD800 || r > 0xDFFF):
			b.WriteRune(r)
		default:
			b.WriteRune('\uFFFD')
		}
	}
	b.WriteString("</Detail></Error>")
	return []byte(b.String())
}
