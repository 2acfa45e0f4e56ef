package engine

import (
	"testing"

	"github.com/google/uuid"
)

// TestMessageIDsAreGUIDs: the ids the engine makes are version 4 UUIDs of
// the RFC 4122 variant in their 36-character text form, all different,
// also where the counter wraps, and two engines start from different
// random halves.
func TestMessageIDsAreGUIDs(t *testing.T) {
	var g, h messageIDs
	g.init()
	h.init()
	g.next.Store(1<<62 - 3) // the counter's 62 bits wrap on the way
	seen := make(map[string]bool)
	for range 10 {
		id := g.new()
		u, err := uuid.Parse(id)
		if err != nil || len(id) != 36 || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != id {
			t.Fatalf("id %q: want a version 4 UUID in lower-case text (%v)", id, err)
		}
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
	}
	if a, b := g.new(), h.new(); a[:19] == b[:19] {
		t.Fatalf("two engines share the random half: %q and %q", a, b)
	}
}
