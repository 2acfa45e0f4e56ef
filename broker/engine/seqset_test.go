package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSeqSetAgainstAModel drives a seqSet and a plain map with the same
// random inserts, replacements and deletes (dense runs, as a queue has, and
// scattered numbers, as deferred messages have) and checks after each step
// that the set's length, minimum, lookups and ordered walks agree with the
// map.
func TestSeqSetAgainstAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newSeqSet()
	model := map[int64]*entry{}
	sorted := func(from int64) []int64 {
		var seqs []int64
		for seq := range model {
			if seq >= from {
				seqs = append(seqs, seq)
			}
		}
		slices.Sort(seqs)
		return seqs
	}
	next := int64(1)
	for step := range 5_000 {
		var seq int64
		switch r := rng.IntN(10); {
		case r < 4: // a new message at the end of the sequence
			seq = next
			next++
		case r < 5: // anywhere, scattered
			seq = 1 + rng.Int64N(next+200)
		default: // an existing one, or none
			seq = 1 + rng.Int64N(next)
		}
		x := &entry{seq: seq}
		if rng.IntN(3) == 0 {
			s.Delete(x)
			delete(model, seq)
		} else {
			s.Set(x)
			model[seq] = x
		}
		if s.Len() != len(model) {
			t.Fatalf("step %d: Len %d, want %d", step, s.Len(), len(model))
		}
		want := sorted(0)
		if m, ok := s.Min(); ok != (len(want) > 0) || ok && m != model[want[0]] {
			t.Fatalf("step %d: Min %v %v, want %v", step, m, ok, want[:min(1, len(want))])
		}
		probe := 1 + rng.Int64N(next+10)
		if got, ok := s.Get(probe); got != model[probe] || ok != (model[probe] != nil) {
			t.Fatalf("step %d: Get(%d) = %v %v, want %v", step, probe, got, ok, model[probe])
		}
		if step%97 == 0 {
			from := rng.Int64N(next + 10)
			var got []int64
			s.Ascend(from, func(x *entry) bool { got = append(got, x.seq); return true })
			if w := sorted(from); !slices.Equal(got, w) {
				t.Fatalf("step %d: Ascend(%d) = %v, want %v", step, from, got, w)
			}
			n := 0
			s.Scan(func(*entry) bool { n++; return n < 3 })
			if n != min(3, len(model)) {
				t.Fatalf("step %d: Scan stopped after %d, want %d", step, n, min(3, len(model)))
			}
		}
	}
}
