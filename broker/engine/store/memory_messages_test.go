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
// each step. The locations are dense for a while (pages fill up, and thin
// out as records are deleted) and scattered for a while (one or two records
// a page), so that pages are made short and full, grow, shrink and are
// reused; the test checks that each happened. The records are kept by value
// in pages that are emptied and reused, and a short page's records move as
// records are put and deleted, so a slot must never show what an earlier
// record left in it, and a record must read the same across the delete of
// another.
func TestMemoryMessagesAgainstAModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := newMemoryMessages()
	model := make(map[locKey]memoryRecord)
	dense := true
	key := func() locKey {
		seq := r.IntN(200)
		if !dense {
			seq = 16*r.IntN(40) + 8*r.IntN(2)*r.IntN(2)
		}
		return keyOf(Loc{Entity: uint32(r.IntN(3) + 1), Sub: 0, Seq: int64(seq)})
	}
	type form struct {
		p    *recordPage
		room int
	}
	before := make(map[locKey]form)
	var grown, madeFull, shrunk, reused, madeShort int
	for step := range 60000 {
		if step%3000 == 0 {
			dense = !dense
		}
		spare := make(map[*recordPage]bool, len(m.spares.pages))
		for _, p := range m.spares.pages {
			spare[p] = true
		}
		switch k := key(); r.IntN(10) {
		case 0, 1, 2, 3:
			op := &Op{Kind: OpPutMessage, Loc: k.loc(), Meta: Meta{Size: int64(step), MessageID: strconv.Itoa(step)}, Message: &broker.Message{}}
			switch r.IntN(3) {
			case 0:
				op.First = &HistoryEvent{Kind: broker.EventSent, Time: int64(step), Actor: "a", Detail: strconv.Itoa(step)}
			case 1:
				op.First = &HistoryEvent{Kind: broker.EventDeadLettered, Time: int64(step), Reason: "r"}
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
			// A record read before the delete of another on its page reads
			// the same after it, and the deleted message is nowhere in the
			// page (the collector may take it).
			base, _ := pageOf(k)
			other := locKey{k[0], base[1] + uint64(r.IntN(recordPageSize))}
			if other == k {
				break
			}
			var held memoryRecord
			if rec := m.get(k); rec != nil {
				held = *rec
			}
			var gone *broker.Message
			if rec := m.get(other); rec != nil {
				gone = rec.msg
			}
			m.delete(other)
			delete(model, other)
			if rec := m.get(k); held != (memoryRecord{}) && (rec == nil || *rec != held) {
				t.Fatalf("step %d: %v read %+v before the delete of %v, %v after", step, k, held, other, rec)
			}
			if p := m.pages[base]; p != nil && gone != nil {
				for _, rec := range p.recs[:cap(p.recs)] {
					if rec.msg == gone {
						t.Fatalf("step %d: page %v still holds the message of %v, deleted", step, base, other)
					}
				}
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
		for base, p := range m.pages {
			was := before[base]
			switch room := cap(p.recs); {
			case spare[p]:
				reused++
			case was.p == nil || was.p == p:
			case room > was.room && room == recordPageSize:
				madeFull++
			case room > was.room:
				grown++
			case room < was.room && was.room == recordPageSize:
				madeShort++
			case room < was.room:
				shrunk++
			}
		}
		clear(before)
		for base, p := range m.pages {
			before[base] = form{p, cap(p.recs)}
		}
		if step%5000 == 4999 {
			// Every thin page was noted, so none is left once all are shrunk.
			m.shrinkThin(m.ops)
			for base, p := range m.pages {
				if p.thin() {
					t.Fatalf("step %d: page %v holds %d records in room for %d, after shrinking", step, base, p.count(), cap(p.recs))
				}
			}
			checkPages(t, step, &m)
		}
	}
	t.Logf("short pages grown %d, made full %d; full pages made short %d, short pages shrunk %d; spare pages reused %d", grown, madeFull, madeShort, shrunk, reused)
	if grown == 0 || madeFull == 0 || madeShort == 0 || shrunk == 0 || reused == 0 {
		t.Fatal("a page change was never seen")
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

// sameRecord reports whether a and b hold the same meta, message and first
// event (a first event kept whole is a copy of its own).
func sameRecord(a, b memoryRecord) bool {
	return a.meta == b.meta && a.msg == b.msg && a.first.ok == b.first.ok && a.first.event() == b.first.event()
}

// checkPages checks the pages: a full page has every empty slot zero, a
// short page has its records in its first slots and the rest of its room
// zero, and room for 1, 2, 4 or 8; no page is empty; a spare page is full,
// zero and not in use; and the page written last is the page of its
// location.
func checkPages(t *testing.T, step int, m *memoryMessages) {
	t.Helper()
	inUse := make(map[*recordPage]bool, len(m.pages))
	for base, p := range m.pages {
		if p.used == 0 {
			t.Fatalf("step %d: empty page %v in the map", step, base)
		}
		inUse[p] = true
		if p.full() {
			for i := range p.recs {
				if !p.has(i) && p.recs[i] != (memoryRecord{}) {
					t.Fatalf("step %d: empty slot %d of page %v holds %+v", step, i, base, p.recs[i])
				}
			}
			continue
		}
		if c := cap(p.recs); c != 1 && c != 2 && c != 4 && c != 8 || len(p.recs) != p.count() {
			t.Fatalf("step %d: short page %v has %d records in %d of room for %d", step, base, p.count(), len(p.recs), c)
		}
		for _, r := range p.recs[len(p.recs):cap(p.recs)] {
			if r != (memoryRecord{}) {
				t.Fatalf("step %d: the room of short page %v holds %+v", step, base, r)
			}
		}
	}
	for _, p := range m.spares.pages {
		if inUse[p] || p.used != 0 || !p.full() || [recordPageSize]memoryRecord(p.recs) != ([recordPageSize]memoryRecord{}) {
			t.Fatalf("step %d: a spare page is in use, short or not empty", step)
		}
	}
	if m.last != nil && m.pages[m.lastBase] != m.last {
		t.Fatalf("step %d: the page written last is not the page of %v", step, m.lastBase)
	}
}

// TestMemoryMessagesDrainAllocatesNothing runs queues put at the back and
// deleted from the front, a batch at a time and interleaved, as the
// engine's loop does: every page is drained through a thin page, and none
// may be shrunk (an allocation) before it empties, so the loop allocates
// nothing once it has its pages.
func TestMemoryMessagesDrainAllocatesNothing(t *testing.T) {
	const queues, batch, inFlight = 4, 64, 256
	m := newMemoryMessages()
	var next, oldest [queues]int64
	msg := &broker.Message{}
	loop := func() {
		for q := range queues {
			for range batch {
				next[q]++
				m.put(keyOf(Loc{Entity: uint32(q + 1), Seq: next[q]})).msg = msg
			}
			for next[q]-oldest[q] > inFlight {
				oldest[q]++
				m.delete(keyOf(Loc{Entity: uint32(q + 1), Seq: oldest[q]}))
			}
		}
	}
	for range 100 {
		loop()
	}
	if per := testing.AllocsPerRun(200, loop) / (queues * batch); per != 0 {
		t.Errorf("%.3f allocations per message put and deleted, want none", per)
	}
	if n := m.len(); n != queues*inFlight {
		t.Fatalf("%d records, want %d", n, queues*inFlight)
	}
}

// TestMemoryMessagesDeletedEntityLetsGoOfThinPages deletes an entity whose
// thin pages wait to be shrunk: the list lets go of them at once, and the
// shrinking that comes due later passes over them.
func TestMemoryMessagesDeletedEntityLetsGoOfThinPages(t *testing.T) {
	m := newMemoryMessages()
	msg := &broker.Message{}
	for seq := int64(1); seq <= recordPageSize/2+1; seq++ {
		m.put(keyOf(Loc{Entity: 1, Seq: seq})).msg = msg // a short page grows full, with half its room used: thin
	}
	if len(m.thin) == 0 {
		t.Fatal("no page waits to be shrunk; the test needs one")
	}
	m.deleteEntity(1)
	for i := m.thinHead; i < len(m.thin); i++ {
		if m.thin[i].p != nil {
			t.Fatalf("a page of the deleted entity (%v) still waits to be shrunk", m.thin[i].base)
		}
	}
	for seq := int64(1); seq <= thinDelay+1; seq++ { // the shrinking comes due
		m.put(keyOf(Loc{Entity: 2, Seq: seq})).msg = msg
	}
	if n := m.len(); n != thinDelay+1 {
		t.Fatalf("%d records, want %d", n, thinDelay+1)
	}
}
