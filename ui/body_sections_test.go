package ui

import (
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

func sectionedMessage(contentType string, sections ...string) *broker.Message {
	m := &broker.Message{ContentType: contentType}
	parts := make([][]byte, len(sections))
	for i, s := range sections {
		parts[i] = []byte(s)
	}
	m.SetSections(parts)
	return m
}

// TestRenderDataSections shows each section under its own marker, each
// rendered by the content type, an empty one as empty.
func TestRenderDataSections(t *testing.T) {
	m := sectionedMessage("application/json", `{"a":1}`, "", "not json")
	f, lines := RenderBody(testStyles, m, 80)
	if f != FormatJSON {
		t.Fatalf("format %s, want the first section's, json", f)
	}
	want := strings.Join([]string{
		"┄┄ data section 1 of 3 · 7B · json ┄┄┄┄┄┄",
		"{",
		`  "a": 1`,
		"}",
		"┄┄ data section 2 of 3 · 0B · empty ┄┄┄┄┄┄",
		"┄┄ data section 3 of 3 · 8B · text ┄┄┄┄┄┄",
		"not json",
	}, "\n")
	if got := plain(lines); got != want {
		t.Fatalf("rendered\n%s\nwant\n%s", got, want)
	}
}

// TestRenderDataSectionsSanitised checks that escape sequences and control
// characters inside a section are neutralised, as in any body.
func TestRenderDataSectionsSanitised(t *testing.T) {
	m := sectionedMessage("text/plain", "ok", "\x1b]52;c;ZXZpbA==\x07\x1b[2Jboom")
	_, lines := RenderBody(testStyles, m, 80)
	for _, l := range lines {
		if strings.Contains(l, "\x1b]") || strings.Contains(l, "\x1b[2J") || strings.Contains(l, "\x07") {
			t.Fatalf("a section's escape sequence reached the screen: %q", l)
		}
	}
}

// TestRenderDataSectionsBudget shares one body's byte budget among the
// sections and counts what is left out.
func TestRenderDataSectionsBudget(t *testing.T) {
	big := strings.Repeat("x", maxRenderBytes-10)
	m := sectionedMessage("text/plain", big, strings.Repeat("y", 30), "z", "w")
	_, lines := RenderBody(testStyles, m, 0)
	out := plain(lines)
	if !strings.Contains(out, "data section 2 of 4 · 30B · text") || !strings.Contains(out, "… 20B more not shown") {
		t.Fatalf("the second section is not cut at the budget:\n%s", out[len(out)-300:])
	}
	if !strings.HasSuffix(out, "… 2 more data sections (2B) not shown") {
		t.Fatalf("the sections past the budget are not counted:\n%s", out[len(out)-300:])
	}
}

// TestDetailBodyTitleCountsSections names the number of data sections.
func TestDetailBodyTitleCountsSections(t *testing.T) {
	c := &Common{Styles: testStyles}
	got := plain(DetailBody(c, sectionedMessage("", "Hello World", "And another message!"), 60))
	if !strings.Contains(got, "Body (2 data sections, 31 bytes)") {
		t.Fatalf("title missing:\n%s", got)
	}
	got = plain(DetailBody(c, &broker.Message{Body: []byte("one")}, 60))
	if !strings.Contains(got, "Body (data, text, 3 bytes)") || strings.Contains(got, "data section") {
		t.Fatalf("a one-section body:\n%s", got)
	}
}
