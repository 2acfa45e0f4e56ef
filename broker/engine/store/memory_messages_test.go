package store

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// TestMemoryMessagesAgainstAModel runs random puts (over records or not,
// with a first history event or without), deletes, reads and entity deletes
// on memoryMessages and on a map of record values, and compares them after
// each step: the records are kept by value in pages that are emptied and
// reused, so a slot must never show what an earlier record left in it.
func TestMemoryMessagesAgainstAModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := newMemoryMessages()
	model := make(map[locKey]memoryRecord)
	key := func() locKey {
		return keyOf(Loc{Entity: uint32(r.IntN(3) + 1), Sub: 0, Seq: int64(r.IntN(200))})
	}
	reused := 0
	for step := range 20000 {
		switch k := key(); r.IntN(10) {
		case 0, 1, 2, 3:
			op := &Op{Kind: OpPutMessage, Loc: k.loc(), Meta: Meta{Size: int64(step), MessageID: strconv.Itoa(step)}, Message: &broker.Message{}}
			switch r.IntN(3) {
			case 0:
				op.First = &HistoryEvent{Kind: broker.EventSent, Time: int64(step), Actor: "a", Detail: strconv.Itoa(step)}
			case 1:
				op.First = &HistoryEvent{Kind: broker.EventDeadLettered, Time: int64(step), Reason: "r"}
			}
			if len(m.spares) > 0 {
				if _, ok := m.pages[pageOfKey(k)]; !ok {
					reused++
				}
			}
			rec := m.put(k)
			if *rec != (memoryRecord{}) {
				t.Fatalf("step %d: put(%v) gave a slot holding %+v", step, k, *rec)
			}
			rec.set(op)
			var want memoryRecord
			want.set(op)
			model[k] = want
		case 4, 5, 6:
			m.delete(k)
			delete(model, k)
		case 7:
			// A pointer held across a delete sees an empty slot, not the
			// message (which the collector may take), and nothing that a
			// later put of another location in a reused page writes is
			// visible at k.
			held := m.get(k)
			m.delete(k)
			delete(model, k)
			if held != nil && *held != (memoryRecord{}) {
				t.Fatalf("step %d: a record held across its delete holds %+v", step, *held)
			}
		case 8:
			got, want := m.get(k), model[k]
			if _, ok := model[k]; !ok {
				if got != nil {
					t.Fatalf("step %d: get(%v) = %+v, want none", step, k, *got)
				}
				break
			}
			if got == nil || !sameRecord(*got, want) {
				t.Fatalf("step %d: get(%v) = %v, want %+v", step, k, got, want)
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
		checkPages(t, step, &m)
	}
	if reused == 0 {
		t.Fatal("no spare page was reused")
	}
	seen := 0
	m.all(func(k locKey, rec *memoryRecord) {
		if want, ok := model[k]; !ok || !sameRecord(*rec, want) {
			t.Fatalf("all: %v holds %+v, want %+v", k, *rec, want)
		}
		seen++
	})
	if seen != len(model) {
		t.Fatalf("all visited %d records, want %d", seen, len(model))
	}
}

// pageOfKey returns the location of the first slot of k's page.
func pageOfKey(k locKey) locKey {
	base, _ := pageOf(k)
	return base
}

// sameRecord reports whether a and b hold the same meta, message and first
// event (a first event kept whole is a copy of its own).
func sameRecord(a, b memoryRecord) bool {
	return a.meta == b.meta && a.msg == b.msg && a.first.ok == b.first.ok && a.first.event() == b.first.event()
}

// checkPages checks that the empty slots of every page, and every slot of
// a spare page, are zero, that no spare page is in use, and that the page
// written last is the page of its location.
func checkPages(t *testing.T, step int, m *memoryMessages) {
	t.Helper()
	inUse := make(map[*recordPage]bool, len(m.pages))
	for base, p := range m.pages {
		if p.used == 0 {
			t.Fatalf("step %d: empty page %v in the map", step, base)
		}
		inUse[p] = true
		for i := range p.recs {
			if !p.has(i) && p.recs[i] != (memoryRecord{}) {
				t.Fatalf("step %d: empty slot %d of page %v holds %+v", step, i, base, p.recs[i])
			}
		}
	}
	for _, p := range m.spares {
		if inUse[p] || p.used != 0 || p.recs != ([recordPageSize]memoryRecord{}) {
			t.Fatalf("step %d: a spare page is in use or not empty", step)
		}
	}
	if m.last != nil && m.pages[m.lastBase] != m.last {
		t.Fatalf("step %d: the page written last is not the page of %v", step, m.lastBase)
	}
}
