package demo

import (
	"strings"
	"testing"
)

// TestHostileMessageSaysWhatItIs: the demo's deliberately hostile message
// (one in a hundred) carries its escapes and says what it is.
func TestHostileMessageSaysWhatItIs(t *testing.T) {
	g := newGenerator(7)
	found := 0
	for range 3000 {
		m := g.message("orders")
		if _, ok := m.ApplicationProperties[HostileProperty]; !ok {
			if strings.ContainsRune(m.Subject, 0x1b) {
				t.Fatalf("an unexplained escape in %q", m.Subject)
			}
			continue
		}
		found++
		if !strings.HasPrefix(m.Subject, "demo: hostile text, shown inert: ") || !strings.ContainsRune(m.Subject, 0x1b) {
			t.Fatalf("hostile subject %q", m.Subject)
		}
		if m.ApplicationProperties[HostileProperty] != HostileExplanation {
			t.Fatalf("explanation %v", m.ApplicationProperties[HostileProperty])
		}
	}
	if found == 0 {
		t.Fatal("no hostile message in 3000")
	}
}
