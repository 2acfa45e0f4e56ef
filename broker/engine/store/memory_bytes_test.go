package store

import (
	"runtime"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// TestMemoryBytesPerRecord measures the memory store's heap per message
// record (the messages themselves excluded: every record holds the same
// one) for records put densely, put 16, 8 and 4 apart, and left of a
// queue put densely and then deleted from but for every 16th, every 8th,
// 5 of every 16 or 9 of every 16 records: the records a queue keeps when
// it holds dead letters or deferred messages among completed ones (the
// last two are the worst cases of the pages' forms). It uses only the
// Store interface, so that it runs on any version of the store.
func TestMemoryBytesPerRecord(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("stores many records")
	}
	const n = 100_000 // records kept
	msg := &broker.Message{}
	for _, c := range []struct {
		name  string
		every int            // a record put every every locations
		keep  func(int) bool // with every 1: the records of the dense put that are kept
		limit float64
	}{
		{"dense", 1, nil, 160},
		{"16 apart", 16, nil, 320},
		{"8 apart", 8, nil, 320},
		{"4 apart", 4, nil, 320},
		{"every 16th left", 1, func(i int) bool { return i%16 == 0 }, 320},
		{"every 8th left", 1, func(i int) bool { return i%8 == 0 }, 320},
		{"5 of 16 left", 1, func(i int) bool { return i%16 < 5 }, 320},
		{"9 of 16 left", 1, func(i int) bool { return i%16 < 9 }, 320},
	} {
		s := NewMemory()
		put := n * c.every
		if c.keep != nil {
			kept := 0
			for i := 0; kept < n; i++ {
				if c.keep(i) {
					kept++
				}
				put = i + 1
			}
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var b Batch
		apply := func() {
			if _, err := s.Apply(&b); err != nil {
				t.Fatal(err)
			}
			b.Ops = b.Ops[:0]
		}
		for i := 0; i < put; i += c.every {
			b.Ops = append(b.Ops, Op{Kind: OpPutMessage, Loc: Loc{Entity: 1, Seq: int64(i + 1)}, Message: msg})
			if len(b.Ops) == 1000 {
				apply()
			}
		}
		apply()
		if c.keep != nil {
			for i := range put {
				if !c.keep(i) {
					b.Ops = append(b.Ops, Op{Kind: OpDeleteMessage, Loc: Loc{Entity: 1, Seq: int64(i + 1)}})
				}
				if len(b.Ops) == 1000 {
					apply()
				}
			}
			apply()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		per := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
		t.Logf("%-16s %4.0f bytes per record", c.name, per)
		if per > c.limit {
			t.Errorf("%s: %.0f bytes per record, over %.0f", c.name, per, c.limit)
		}
		runtime.KeepAlive(s)
	}
}
