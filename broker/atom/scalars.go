package atom

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ValueError is an element whose text is not a value of its type. Element
// is its path from the outermost description that was read, as
// "QueueDescription.LockDuration" or
// "QueueDescription.AuthorizationRules[0].CreatedTime"; Err is a
// *DurationError or a *SyntaxError.
type ValueError struct {
	Element string
	Err     error
}

// Error returns "Element: what is wrong".
func (e *ValueError) Error() string { return e.Element + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ValueError) Unwrap() error { return e.Err }

// SyntaxError is text that is not a value of the type it should have.
type SyntaxError struct {
	// Text is the text as given.
	Text string
	// Want names what it should be: "a boolean (true or false)", "an
	// integer", "a valid int"...
	Want string
}

// Error returns `"text" is not <Want>`.
func (e *SyntaxError) Error() string { return fmt.Sprintf("%q is not %s", e.Text, e.Want) }

// within puts the name of the element being read in front of the path of
// a *ValueError from its children.
func within(name string, err error) error {
	var ve *ValueError
	if errors.As(err, &ve) {
		ve.Element = name + "." + ve.Element
	}
	return err
}

// elementText reads the text of the element start opens and returns it
// with surrounding white space trimmed.
func elementText(d *xml.Decoder, start xml.StartElement) (raw, trimmed string, err error) {
	if err := d.DecodeElement(&raw, &start); err != nil {
		return "", "", err
	}
	return raw, strings.TrimSpace(raw), nil
}

// Bool is an xs:boolean element: true, false, 1 or 0.
type Bool bool

// UnmarshalXML reads true, false, 1 or 0, around white space; anything else
// is a *ValueError.
func (b *Bool) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	raw, s, err := elementText(d, start)
	if err != nil {
		return err
	}
	switch s {
	case "true", "1":
		*b = true
	case "false", "0":
		*b = false
	default:
		return &ValueError{Element: start.Name.Local, Err: &SyntaxError{Text: raw, Want: "a boolean (true or false)"}}
	}
	return nil
}

// Int is an integer element (xs:int, xs:long).
type Int int64

// UnmarshalXML reads a decimal integer, around white space; anything else
// is a *ValueError.
func (n *Int) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	raw, s, err := elementText(d, start)
	if err != nil {
		return err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return &ValueError{Element: start.Name.Local, Err: &SyntaxError{Text: raw, Want: "an integer"}}
	}
	*n = Int(v)
	return nil
}

// Duration is an xs:duration element (ParseDuration, FormatDuration).
type Duration time.Duration

// MarshalText writes the duration (FormatDuration).
func (d Duration) MarshalText() ([]byte, error) { return []byte(FormatDuration(time.Duration(d))), nil }

// UnmarshalXML reads a duration, around white space; a malformed one is a
// *ValueError holding a *DurationError.
func (d *Duration) UnmarshalXML(dec *xml.Decoder, start xml.StartElement) error {
	_, s, err := elementText(dec, start)
	if err != nil {
		return err
	}
	v, err := ParseDuration(s)
	if err != nil {
		return &ValueError{Element: start.Name.Local, Err: err}
	}
	*d = Duration(v)
	return nil
}

// ZeroTime is how Service Bus writes a time it does not know (an entity
// never accessed); the SDKs read it as the zero time.
const ZeroTime = "0001-01-01T00:00:00"

// FormatTime writes a time as Service Bus does: RFC 3339 in UTC with as
// many fractional digits as needed, or ZeroTime for the zero time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ZeroTime
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// ParseTime reads a time as Service Bus writes it: RFC 3339 with optional
// fractional seconds (Azure writes up to seven digits), in UTC; ZeroTime
// and the empty string are the zero time. Anything else is a
// *SyntaxError.
func ParseTime(s string) (time.Time, error) {
	t := strings.TrimSpace(s)
	if t == "" || t == ZeroTime {
		return time.Time{}, nil
	}
	v, err := time.Parse(time.RFC3339Nano, t)
	if err != nil {
		return time.Time{}, &SyntaxError{Text: s, Want: "an RFC 3339 time"}
	}
	return v.UTC(), nil
}

// Time is an xs:dateTime element (ParseTime, FormatTime).
type Time struct{ time.Time }

// MarshalText writes the time (FormatTime).
func (t Time) MarshalText() ([]byte, error) { return []byte(FormatTime(t.Time)), nil }

// UnmarshalXML reads a time (ParseTime); a malformed one is a *ValueError.
func (t *Time) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	raw, _, err := elementText(d, start)
	if err != nil {
		return err
	}
	v, err := ParseTime(raw)
	if err != nil {
		return &ValueError{Element: start.Name.Local, Err: err}
	}
	t.Time = v
	return nil
}

// InstanceType is an i:type attribute (XML Schema instance type), such as
// "SqlFilter" or "d6p1:string".
type InstanceType string

// MarshalXMLAttr writes i:type, with the i prefix the description
// declares; nothing when empty.
func (t InstanceType) MarshalXMLAttr(xml.Name) (xml.Attr, error) {
	if t == "" {
		return xml.Attr{}, nil
	}
	return xml.Attr{Name: xml.Name{Local: "i:type"}, Value: string(t)}, nil
}

// Local returns the type without its namespace prefix: "d6p1:string" is
// "string".
func (t InstanceType) Local() string {
	s := strings.TrimSpace(string(t))
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[i+1:]
	}
	return s
}
