package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/charmbracelet/x/ansi"
	"github.com/hamba/avro/v2/ocf"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/themes"
)

var testStyles = themes.NewStyles(themes.Dark())

func plain(lines []string) string { return ansi.Strip(strings.Join(lines, "\n")) }

func TestDetectFormat(t *testing.T) {
	cases := []struct {
		ct   string
		kind broker.BodyKind
		body string
		want BodyFormat
	}{
		{"application/json", broker.BodyData, `{"a":1}`, FormatJSON},
		{"application/json; charset=utf-8", broker.BodyData, `[1,2]`, FormatJSON},
		{"application/vnd.order+json", broker.BodyData, `{}`, FormatJSON},
		{"application/json", broker.BodyData, `{not json`, FormatText},
		{"application/xml", broker.BodyData, `<a/>`, FormatXML},
		{"text/xml", broker.BodyData, `<a/>`, FormatXML},
		{"application/atom+xml", broker.BodyData, `<a/>`, FormatXML},
		{"text/plain", broker.BodyData, "hello", FormatText},
		{"text/plain", broker.BodyData, "\x00\x01\x02\x03\x04", FormatHex},
		{"avro/binary", broker.BodyData, "Obj\x01...", FormatAvro},
		{"", broker.BodyData, "Obj\x01...", FormatAvro},
		{"", broker.BodyData, `{"a":1}`, FormatJSON},
		{"", broker.BodyData, `<a/>`, FormatXML},
		{"", broker.BodyData, "just text", FormatText},
		{"application/octet-stream", broker.BodyData, "just text", FormatHex},
		{"", broker.BodyData, "\xff\xfe\x00", FormatHex},
		{"application/json", broker.BodyValue, "", FormatAMQP},
		{"", broker.BodySequence, "", FormatAMQP},
	}
	for _, c := range cases {
		if got := DetectFormat(c.ct, c.kind, []byte(c.body)); got != c.want {
			t.Errorf("DetectFormat(%q, %s, %q) = %s, want %s", c.ct, c.kind, c.body, got, c.want)
		}
	}
}

func TestRenderJSONPrettyAndHighlighted(t *testing.T) {
	m := &broker.Message{ContentType: "application/json", Body: []byte(`{"id":7,"ok":true,"tags":["a"],"note":"\u001b[2J"}`)}
	f, lines := RenderBody(testStyles, m, 80)
	if f != FormatJSON {
		t.Fatalf("format %s", f)
	}
	want := `{
  "id": 7,
  "ok": true,
  "tags": [
    "a"
  ],
  "note": "\u001b[2J"
}`
	if got := plain(lines); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	joined := strings.Join(lines, "")
	if !strings.Contains(joined, testStyles.JSONKey.Render(`"id"`)) || !strings.Contains(joined, testStyles.JSONNumber.Render("7")) ||
		!strings.Contains(joined, testStyles.JSONLiteral.Render("true")) {
		t.Fatalf("keys, numbers and literals are not highlighted: %q", joined)
	}
}

func TestRenderXMLIndented(t *testing.T) {
	m := &broker.Message{ContentType: "application/xml", Body: []byte(`<?xml version="1.0"?><o:order xmlns:o="urn:o" id="7"><o:line>pen</o:line><o:line>ink</o:line><!-- c --></o:order>`)}
	f, lines := RenderBody(testStyles, m, 80)
	want := `<?xml version="1.0"?>
<o:order xmlns:o="urn:o" id="7">
  <o:line>pen</o:line>
  <o:line>ink</o:line>
  <!-- c -->
</o:order>`
	if f != FormatXML || plain(lines) != want {
		t.Fatalf("%s:\n%s\nwant\n%s", f, plain(lines), want)
	}
}

func TestRenderBadXMLFallsBackToText(t *testing.T) {
	m := &broker.Message{ContentType: "application/xml", Body: []byte(`<a><b></a>`)}
	f, lines := RenderBody(testStyles, m, 80)
	if f != FormatText || !strings.HasPrefix(plain(lines), "not well-formed XML") || !strings.HasSuffix(plain(lines), "<a><b></a>") {
		t.Fatalf("%s:\n%s", f, plain(lines))
	}
}

func TestRenderTextNeutralisesEscapes(t *testing.T) {
	m := &broker.Message{ContentType: "text/plain", Body: []byte("hello\x1b]52;c;aGk=\x07\nline\u202etwo")}
	_, lines := RenderBody(testStyles, m, 80)
	if got, want := plain(lines), "hello␛]52;c;aGk=␇\nline<U+202E>two"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	for _, l := range lines {
		if strings.Contains(ansi.Strip(l), "\x1b") {
			t.Fatalf("escape reached the screen: %q", l)
		}
	}
}

func TestRenderHexDump(t *testing.T) {
	m := &broker.Message{ContentType: "application/octet-stream", Body: []byte{0, 1, 2, 0x1b, 'A'}}
	f, lines := RenderBody(testStyles, m, 100)
	want := "00000000  00 01 02 1b 41                                    |....A|"
	if f != FormatHex || plain(lines) != want {
		t.Fatalf("%s: %q", f, plain(lines))
	}
}

func TestRenderAMQPValueTree(t *testing.T) {
	enc, err := (&amqp.Message{Value: map[string]any{
		"name":  "pen\x1b[31m",
		"count": int32(3),
		"tags":  []any{"a", int64(2)},
		"at":    time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
	}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m := &broker.Message{BodyKind: broker.BodyValue, Body: enc}
	f, lines := RenderBody(testStyles, m, 100)
	want := `value (map, 4 entries)
├─ "at": 2025-03-01T12:00:00Z (timestamp)
├─ "count": 3 (int)
├─ "name": "pen\x1b[31m" (string)
└─ "tags" (list, 2)
   ├─ [0]: "a" (string)
   └─ [1]: 2 (long)`
	if f != FormatAMQP || plain(lines) != want {
		t.Fatalf("%s:\n%s\nwant\n%s", f, plain(lines), want)
	}
}

func TestRenderAMQPSequence(t *testing.T) {
	enc, err := (&amqp.Message{Sequence: [][]any{{"a", true}, {int32(1)}}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	_, lines := RenderBody(testStyles, &broker.Message{BodyKind: broker.BodySequence, Body: enc}, 100)
	want := `sequence 0 (list, 2)
├─ [0]: "a" (string)
└─ [1]: true (boolean)
sequence 1 (list, 1)
└─ [0]: 1 (int)`
	if plain(lines) != want {
		t.Fatalf("\n%s\nwant\n%s", plain(lines), want)
	}
}

func TestRenderAMQPGarbageFallsBackToHex(t *testing.T) {
	f, lines := RenderBody(testStyles, &broker.Message{BodyKind: broker.BodyValue, Body: []byte{0x00, 0x53}}, 100)
	if f != FormatHex || !strings.HasPrefix(plain(lines), "AMQP body does not decode") {
		t.Fatalf("%s: %s", f, plain(lines))
	}
}

func TestRenderAvroContainer(t *testing.T) {
	schema := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"}]}`
	var buf bytes.Buffer
	enc, err := ocf.NewEncoder(schema, &buf)
	if err != nil {
		t.Fatal(err)
	}
	type order struct {
		ID   int64  `avro:"id"`
		Item string `avro:"item"`
	}
	for _, o := range []order{{1, "pen"}, {2, "ink\x1b[2J"}} {
		if err := enc.Encode(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	f, lines := RenderBody(testStyles, &broker.Message{ContentType: "avro/binary", Body: buf.Bytes()}, 100)
	got := plain(lines)
	if f != FormatAvro {
		t.Fatalf("format %s:\n%s", f, got)
	}
	for _, want := range []string{"schema", `"name": "Order"`, "record 0", `"id": 1`, `"item": "pen"`, "record 1", `"item": "ink\u001b[2J"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q missing from\n%s", want, got)
		}
	}
}

func TestRenderBodyWrapsAtWidth(t *testing.T) {
	m := &broker.Message{ContentType: "text/plain", Body: []byte(strings.Repeat("x", 25))}
	_, lines := RenderBody(testStyles, m, 10)
	if got := plain(lines); got != "xxxxxxxxxx\nxxxxxxxxxx\nxxxxx" {
		t.Fatalf("%q", got)
	}
}
