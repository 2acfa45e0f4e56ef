package ui

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitizeHostileInput(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain", "order 42 ✓ 注文", "order 42 ✓ 注文"},
		{"CSI colour and clear screen", "\x1b[31mred\x1b[2J", "␛[31mred␛[2J"},
		{"OSC 52 clipboard write (BEL)", "\x1b]52;c;cm0gLXJmIH4=\x07", "␛]52;c;cm0gLXJmIH4=␇"},
		{"OSC 52 clipboard write (ST)", "\x1b]52;c;aGk=\x1b\\", "␛]52;c;aGk=␛\\"},
		{"OSC 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "␛]8;;https://evil.example␛\\click␛]8;;␛\\"},
		{"C1 CSI and OSC", "a\u009b31mb\u009d0;title\u009c", `a\x9b31mb\x9d0;title\x9c`},
		{"C1 NEL", "x\u0085y", `x\x85y`},
		{"bidi override", "invoice\u202egpj.exe", "invoice<U+202E>gpj.exe"},
		{"bidi isolates and marks", "\u2066a\u2069\u200f", "<U+2066>a<U+2069><U+200F>"},
		{"lone ESC at end", "tail\x1b", "tail␛"},
		{"C0 controls and DEL", "\x00\x07\x08\x7f", "␀␇␈␡"},
		{"newline and tab on one line", "a\nb\tc\r\n", "a↵b c␍↵"},
		{"line separator", "a\u2028b", "a↵b"},
		{"invalid UTF-8", "ok\xff\xfe", "ok\uFFFD\uFFFD"},
		{"raw 8-bit CSI byte", "\x9b31m", "\uFFFD31m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Sanitize(c.in)
			if got != c.want {
				t.Fatalf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
			}
			assertInert(t, got)
		})
	}
}

func TestSanitizeMultiline(t *testing.T) {
	in := "line 1\r\n\tindented\x1b[1m\nab\tc\u202e"
	want := "line 1\n    indented␛[1m\nab  c<U+202E>"
	if got := SanitizeMultiline(in); got != want {
		t.Fatalf("SanitizeMultiline = %q, want %q", got, want)
	}
	for _, l := range strings.Split(SanitizeMultiline(in), "\n") {
		assertInert(t, l)
	}
}

func TestSanitizeSafeStringIsUnchanged(t *testing.T) {
	s := "orders/Subscriptions/audit"
	if got := Sanitize(s); got != s {
		t.Fatalf("got %q", got)
	}
}

// assertInert fails if s holds anything a terminal would act on.
func assertInert(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%q is not valid UTF-8", s)
	}
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			t.Fatalf("%q holds control character %U", s, r)
		case r >= 0x80 && r <= 0x9f:
			t.Fatalf("%q holds C1 control %U", s, r)
		case isBidiControl(r):
			t.Fatalf("%q holds bidi control %U", s, r)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("\x1b]52;c;aGk=\x07\u202e\u009b")
	f.Fuzz(func(t *testing.T, s string) {
		assertInert(t, Sanitize(s))
		for _, l := range strings.Split(SanitizeMultiline(s), "\n") {
			assertInert(t, l)
		}
	})
}
