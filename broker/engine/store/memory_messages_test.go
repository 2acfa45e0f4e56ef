package store

import (
	"math/rand/v2"
	"testing"
)

// TestMemoryMessagesAgainstAModel runs random puts, deletes, reads and
// entity deletes on memoryMessages and on a map, and compares them after
// each step.
func TestMemoryMessagesAgainstAModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := newMemoryMessages()
	model := make(map[locKey]*memoryRecord)
	key := func() locKey {
		return keyOf(Loc{Entity: uint32(r.IntN(3) + 1), Sub: 0, Seq: int64(r.IntN(200))})
	}
	for step := range 20000 {
		switch k := key(); r.IntN(10) {
		case 0, 1, 2, 3:
			rec := &memoryRecord{}
			m.put(k, rec)
			model[k] = rec
		case 4, 5, 6, 7:
			m.delete(k)
			delete(model, k)
		case 8:
			if got, want := m.get(k), model[k]; got != want {
				t.Fatalf("step %d: get(%v) = %p, want %p", step, k, got, want)
			}
		case 9:
			if r.IntN(50) == 0 {
				m.deleteEntity(k.entity())
				for mk := range model {
					if mk.entity() == k.entity() {
						delete(model, mk)
					}
				}
			}
		}
		if m.len() != len(model) {
			t.Fatalf("step %d: %d records, want %d", step, m.len(), len(model))
		}
	}
	seen := 0
	m.all(func(k locKey, rec *memoryRecord) {
		if model[k] != rec {
			t.Fatalf("all: %v holds %p, want %p", k, rec, model[k])
		}
		seen++
	})
	if seen != len(model) {
		t.Fatalf("all visited %d records, want %d", seen, len(model))
	}
}
