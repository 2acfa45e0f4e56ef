package atom

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// KeyValues is a list of typed values by name: a correlation filter's
// Properties, or the Parameters of a SQL filter or action (keyed by the
// parameter's name with its @).
type KeyValues struct {
	Items []KeyValue `xml:"KeyValueOfstringanyType"`
	// Other holds any other element, which Service Bus does not write;
	// readers may refuse it.
	Other []OtherElement `xml:",any"`
}

// OtherElement is an element a list does not expect.
type OtherElement struct {
	XMLName xml.Name
}

// KeyValue is one named value.
type KeyValue struct {
	Key   string `xml:"Key"`
	Value Value  `xml:"Value"`
}

// Value is a typed value: Type is its i:type as written ("d6p1:string",
// with the prefix bound to XML Schema on the element), Nil is i:nil="true"
// (a null), Text the value's text.
type Value struct {
	Type InstanceType
	Nil  bool
	Text string
}

// MarshalXML writes i:type with its prefix bound to XML Schema, or
// i:nil="true".
func (v Value) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	start.Attr = nil
	if v.Type != "" {
		start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: PrefixInstance + ":type"}, Value: string(v.Type)})
		if prefix, _, ok := strings.Cut(string(v.Type), ":"); ok {
			start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: "xmlns:" + prefix}, Value: NSSchema})
		}
	}
	if v.Nil {
		start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: PrefixInstance + ":nil"}, Value: "true"})
	}
	return e.EncodeElement(v.Text, start)
}

// UnmarshalXML reads the i:type and i:nil attributes, whatever their
// prefix, and the text.
func (v *Value) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	*v = Value{}
	for _, a := range start.Attr {
		switch {
		case a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns":
		case a.Name.Local == "type":
			v.Type = InstanceType(a.Value)
		case a.Name.Local == "nil":
			s := strings.TrimSpace(a.Value)
			v.Nil = s == "true" || s == "1"
		}
	}
	return d.DecodeElement(&v.Text, &start)
}

// NewValue writes a Go value with its XML Schema type (under
// PrefixSchema): a string, a bool, an integer (int when it fits, the type
// the Go SDK reads; else long, or unsignedLong), a float (double), a
// time.Time (dateTime, in UTC), a time.Duration (duration), a []byte
// (base64Binary); nil is i:nil, and anything else (a uuid.UUID...) its
// text as a string.
func NewValue(x any) Value {
	if x == nil {
		return Value{Nil: true}
	}
	typ, text := schemaValue(x)
	return Value{Type: InstanceType(PrefixSchema + ":" + typ), Text: text}
}

func schemaValue(x any) (typ, text string) {
	switch v := x.(type) {
	case string:
		return "string", v
	case bool:
		return "boolean", strconv.FormatBool(v)
	case int, int8, int16, int32, int64, uint8, uint16, uint32:
		n, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			return "int", strconv.FormatInt(n, 10)
		}
		return "long", strconv.FormatInt(n, 10)
	case uint, uint64:
		return "unsignedLong", fmt.Sprint(v)
	case float32:
		return "double", strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return "double", strconv.FormatFloat(v, 'g', -1, 64)
	case time.Time:
		return "dateTime", v.UTC().Format(time.RFC3339Nano)
	case time.Duration:
		return "duration", FormatDuration(v)
	case []byte:
		return "base64Binary", base64.StdEncoding.EncodeToString(v)
	case uuid.UUID:
		return "string", v.String()
	}
	return "string", fmt.Sprint(x)
}

// NewKeyValues writes values by name in name order; nil for none.
func NewKeyValues(m map[string]any) *KeyValues {
	if len(m) == 0 {
		return nil
	}
	kv := &KeyValues{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv.Items = append(kv.Items, KeyValue{Key: k, Value: NewValue(m[k])})
	}
	return kv
}

// UnsupportedTypeError is a typed value of a type this package cannot
// read.
type UnsupportedTypeError struct {
	Type string
}

// Error returns `the type "T" is not supported`.
func (e *UnsupportedTypeError) Error() string {
	return fmt.Sprintf("the type %q is not supported", e.Type)
}

// Decode reads the value by its XML Schema type: nil for i:nil; string (or
// no type) as a string; boolean as a bool; int, long, short and byte as an
// int64; unsignedByte to unsignedLong as a uint64; double, float and
// decimal as a float64; dateTime as a time.Time in UTC; duration as a
// time.Duration (ParseDuration); base64Binary as a []byte; guid as a
// uuid.UUID. Malformed text is a *SyntaxError (a *DurationError for a
// duration) and an unknown type an *UnsupportedTypeError.
func (v Value) Decode() (any, error) {
	if v.Nil {
		return nil, nil
	}
	typ := v.Type.Local()
	text := strings.TrimSpace(v.Text)
	var x any
	var err error
	switch typ {
	case "string", "":
		return v.Text, nil
	case "boolean":
		switch text {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
		err = strconv.ErrSyntax
	case "int", "long", "short", "byte":
		x, err = strconv.ParseInt(text, 10, 64)
	case "unsignedByte", "unsignedShort", "unsignedInt", "unsignedLong":
		x, err = strconv.ParseUint(text, 10, 64)
	case "double", "float", "decimal":
		x, err = strconv.ParseFloat(text, 64)
	case "dateTime":
		var t time.Time
		if t, err = time.Parse(time.RFC3339Nano, text); err == nil {
			x = t.UTC()
		}
	case "duration":
		return ParseDuration(text)
	case "base64Binary":
		x, err = base64.StdEncoding.DecodeString(text)
	case "guid":
		x, err = uuid.Parse(text)
	default:
		return nil, &UnsupportedTypeError{Type: typ}
	}
	if err != nil {
		return nil, &SyntaxError{Text: clip(v.Text), Want: "a valid " + typ}
	}
	return x, nil
}

// clip shortens text quoted in an error message.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
