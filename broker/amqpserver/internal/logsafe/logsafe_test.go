package logsafe

import (
	"strings"
	"testing"
	"time"
)

func TestClip(t *testing.T) {
	long := strings.Repeat("a", 1000)
	for in, want := range map[string]string{
		"q/Subscriptions/s":    "q/Subscriptions/s",
		"a\nlevel=ERROR":       `a\nlevel=ERROR`,
		"\x1b[31mred\x1b[0m":   `\x1b[31mred\x1b[0m`,
		"ab\u202ecd":           `ab\u202ecd`,
		"caf\xe9":              `caf\xe9`,
		`back\slash`:           `back\\slash`,
		"héllo wörld":          "héllo wörld",
		long:                   strings.Repeat("a", MaxLen) + "…(840 more bytes)",
		"\x00" + long[:MaxLen]: `\x00` + strings.Repeat("a", MaxLen-4) + "…(4 more bytes)",
	} {
		got := Clip(in)
		if got != want {
			t.Errorf("Clip(%.40q) = %q, want %q", in, got, want)
		}
		if len(got) > MaxLen+len("…(99999 more bytes)") {
			t.Errorf("Clip(%.40q) is %d bytes long", in, len(got))
		}
	}
	if Err(nil) != "" {
		t.Error("Err(nil) is not empty")
	}
}

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(3, time.Second)
	for i := range 3 {
		if ok, held := l.Allow(now); !ok || held != 0 {
			t.Fatalf("line %d of the burst: %v %d", i, ok, held)
		}
	}
	for range 5 {
		if ok, _ := l.Allow(now); ok {
			t.Fatal("a line beyond the burst")
		}
	}
	now = now.Add(time.Second)
	if ok, held := l.Allow(now); !ok || held != 5 {
		t.Fatalf("after an interval: %v, %d held back, want 5", ok, held)
	}
	if ok, _ := l.Allow(now); ok {
		t.Fatal("two lines in one interval")
	}
	if n := l.Suppressed(); n != 1 {
		t.Fatalf("Suppressed %d, want 1", n)
	}
	now = now.Add(time.Hour)
	for range 3 {
		if ok, _ := l.Allow(now); !ok {
			t.Fatal("the burst did not refill")
		}
	}
	if ok, _ := l.Allow(now); ok {
		t.Fatal("more than the burst after a long pause")
	}
}
