package store

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestMemoryEntitiesApplyAtOnce holds one entity's shard as a batch of it
// would, and applies a batch of another entity, and reads it: neither
// waits for the first (with one mutex for the store, both did). A batch
// that also changes the held entity waits, and is applied whole once the
// shard is let go.
func TestMemoryEntitiesApplyAtOnce(t *testing.T) {
	s := NewMemory()
	msg := &broker.Message{}
	put := func(locs ...Loc) *Batch {
		var b Batch
		for _, loc := range locs {
			b.PutMessage(loc, Meta{}, msg)
		}
		return &b
	}
	if _, err := s.Apply(put(Loc{Entity: 1, Seq: 1})); err != nil {
		t.Fatal(err)
	}
	held := s.shard(1)
	held.mu.Lock()
	done := make(chan error)
	go func() {
		_, err := s.Apply(put(Loc{Entity: 2, Seq: 1}))
		if err == nil {
			_, err = s.Get(Loc{Entity: 2, Seq: 1})
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a batch of entity 2 waited for entity 1's shard")
	}
	both := make(chan error)
	go func() {
		_, err := s.Apply(put(Loc{Entity: 2, Seq: 2}, Loc{Entity: 1, Seq: 2}))
		both <- err
	}()
	held.mu.Unlock()
	if err := <-both; err != nil {
		t.Fatal(err)
	}
	for _, loc := range []Loc{{Entity: 1, Seq: 2}, {Entity: 2, Seq: 2}} {
		if _, err := s.Get(loc); err != nil {
			t.Fatalf("%+v: %v", loc, err)
		}
	}
}

// TestMemoryBatchesAcrossEntities applies, at once, batches that change
// overlapping sets of entities with their ops in opposite orders (no two
// may wait for each other), while another goroutine deletes and makes
// again an entity that readers read: nothing is lost and nothing waits for
// ever.
func TestMemoryBatchesAcrossEntities(t *testing.T) {
	s := NewMemory()
	msg := &broker.Message{}
	const each = 300
	pairs := [][2]uint32{{1, 2}, {2, 3}, {3, 1}, {2, 1}}
	var wg sync.WaitGroup
	errs := make(chan error, len(pairs)+2)
	for w, pair := range pairs {
		wg.Go(func() {
			for i := range each {
				var b Batch
				for _, id := range pair {
					b.PutMessage(Loc{Entity: id, Seq: int64(w*each + i + 1)}, Meta{}, msg)
					b.PutHistory(HistoryKey{Entity: id, Seq: int64(w*each + i + 1)}, 1, &HistoryEvent{Kind: broker.EventLocked})
				}
				if _, err := s.Apply(&b); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range each {
			var b Batch
			b.PutEntity(EntityRecord{ID: 9, Entity: broker.Entity{Path: "q"}})
			b.PutMessage(Loc{Entity: 9, Seq: int64(i + 1)}, Meta{}, msg)
			if _, err := s.Apply(&b); err != nil {
				errs <- err
				return
			}
			b.Reset()
			b.DeleteEntity(9)
			if _, err := s.Apply(&b); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Go(func() {
		out := make([]*broker.Message, 2)
		for i := range each {
			_, _ = s.Get(Loc{Entity: 9, Seq: int64(i + 1)})
			if err := s.Bodies([]Loc{{Entity: 9, Seq: int64(i)}, {Entity: 1, Seq: 1}}, out); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l := load(t, s)
	if n := len(l.Messages); n != 2*len(pairs)*each || len(l.Entities) != 0 {
		t.Fatalf("%d messages and %d entities, want %d and none", n, len(l.Entities), 2*len(pairs)*each)
	}
	if n := s.HistoryCount(); n != 2*len(pairs)*each {
		t.Fatalf("%d histories, want %d", n, 2*len(pairs)*each)
	}
	if s.shard(9) != nil {
		t.Fatal("the deleted entity's shard is still in the store")
	}
}

// TestMemoryIdleEntityPagesShrink leaves an entity idle with thin full
// pages (every 16th record left of a dense queue, its last deletes fewer
// than thinDelay ago, so that its own work shrank none of them): the
// other entities' work shrinks them, as it did when the store had one
// count of puts and deletes for all.
func TestMemoryIdleEntityPagesShrink(t *testing.T) {
	s := NewMemory()
	msg := &broker.Message{}
	const pages = 32
	var b Batch
	apply := func() {
		t.Helper()
		if _, err := s.Apply(&b); err != nil {
			t.Fatal(err)
		}
		b.Reset()
	}
	for seq := range int64(pages * recordPageSize) {
		b.PutMessage(Loc{Entity: 1, Seq: seq}, Meta{}, msg)
	}
	apply()
	for seq := range int64(pages * recordPageSize) {
		if seq%recordPageSize != 0 {
			b.DeleteMessage(Loc{Entity: 1, Seq: seq})
		}
	}
	apply()
	fullPages := func() int {
		sh := s.reading(1)
		defer sh.mu.RUnlock()
		n := 0
		for _, p := range sh.messages.pages {
			if p.full() {
				n++
			}
		}
		return n
	}
	if n := fullPages(); n != pages {
		t.Fatalf("%d full pages before the other entity's work, want %d: the test needs them", n, pages)
	}
	for seq := int64(1); seq <= 2*idleOps; seq++ {
		b.PutMessage(Loc{Entity: 2, Seq: seq}, Meta{}, msg)
		b.DeleteMessage(Loc{Entity: 2, Seq: seq})
		if len(b.Ops) == 128 {
			apply()
		}
	}
	if n := fullPages(); n != 0 {
		t.Fatalf("%d full pages of one record each left in the idle entity, want none", n)
	}
	l := load(t, s)
	if len(l.Messages) != pages {
		t.Fatalf("%d messages, want %d", len(l.Messages), pages)
	}
}

// TestMemoryShardsAgainstPebble applies the same random batches to a
// memory store and a Pebble store: batches of one entity and of several (a
// fan-out's), with entities deleted, some of them written again in the
// same batch, and every kind of op and history change. Both must load the
// same, and keep the same histories.
func TestMemoryShardsAgainstPebble(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	mem := NewMemory()
	peb, err := OpenPebble(t.TempDir(), PebbleOptions{MemTableSize: 1 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = peb.Close() })
	const entities = 5
	seq := map[uint32]int64{}
	event := &HistoryEvent{Kind: broker.EventLocked, Actor: "a"}
	ops := func(b *Batch, e uint32) {
		for range rng.IntN(6) + 1 {
			switch k := rng.IntN(12); {
			case k < 4:
				seq[e]++
				m, meta := testMessage(seq[e])
				b.PutMessageWithHistory(Loc{Entity: e, Seq: seq[e]}, meta, m, &HistoryEvent{Kind: broker.EventSent, Actor: "s"})
				b.SetSequence(e, seq[e])
			case k < 6 && seq[e] > 0:
				s := rng.Int64N(seq[e]) + 1
				b.DeleteMessage(Loc{Entity: e, Seq: s})
				b.DeleteHistory(HistoryKey{Entity: e, Seq: s}, 0, 8)
			case k == 6 && seq[e] > 0:
				s := rng.Int64N(seq[e]) + 1
				b.PutHistory(HistoryKey{Entity: e, Seq: s}, 1, event)
			case k == 7:
				b.SetSessionState(e, strconv.Itoa(rng.IntN(3)), []byte{byte(rng.IntN(256))}, rng.Int64N(100))
			case k == 8:
				b.DeleteSessionState(e, strconv.Itoa(rng.IntN(3)))
			case k == 9:
				b.PutDuplicate(DuplicateRecord{Entity: e, ID: strconv.Itoa(rng.IntN(4)), End: int64(rng.IntN(3))})
			case k == 10:
				b.DeleteDuplicate(DuplicateRecord{Entity: e, ID: strconv.Itoa(rng.IntN(4)), End: int64(rng.IntN(3))})
			default:
				b.PutEntity(EntityRecord{ID: e, Entity: broker.Entity{Path: "e" + strconv.Itoa(int(e)) + "-" + strconv.Itoa(rng.IntN(9))}})
			}
		}
	}
	for range 2000 {
		var b Batch
		for _, e := range rng.Perm(entities)[:rng.IntN(3)+1] {
			e := uint32(e + 1)
			if rng.IntN(40) == 0 {
				b.DeleteEntity(e)
				seq[e] = 0 // ids are not reused by the engine; the stores must cope all the same
			}
			ops(&b, e)
		}
		apply(t, mem, &b)
		apply(t, peb, &b)
	}
	// Last, entity 1 with something of every kind, deleted and written
	// again in a batch with entity 2's ops: nothing of before is left.
	for _, last := range []func(b *Batch){
		func(b *Batch) {
			ops(b, 1)
			b.SetSessionState(1, "last", []byte{1}, 1)
			b.PutDuplicate(DuplicateRecord{Entity: 1, ID: "last", End: 1})
		},
		func(b *Batch) {
			ops(b, 2)
			b.DeleteEntity(1)
			seq[1] = 0
			ops(b, 1)
		},
	} {
		var b Batch
		last(&b)
		apply(t, mem, &b)
		apply(t, peb, &b)
	}
	got, want := load(t, mem), load(t, peb)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the memory store loads\n%+v\nthe Pebble store\n%+v", got, want)
	}
	if len(got.Messages) == 0 || len(got.States) == 0 || len(got.Dups) == 0 {
		t.Fatalf("%d messages, %d states, %d duplicate records: the test needs some of each", len(got.Messages), len(got.States), len(got.Dups))
	}
	for e := uint32(1); e <= entities; e++ {
		for s := int64(1); s <= seq[e]; s++ {
			k := HistoryKey{Entity: e, Seq: s}
			f1, h1, err1 := mem.History(k)
			f2, h2, err2 := peb.History(k)
			if f1 != f2 || !reflect.DeepEqual(h1, h2) || err1 != nil || err2 != nil {
				t.Fatalf("history of %+v: memory %d %+v %v, Pebble %d %+v %v", k, f1, h1, err1, f2, h2, err2)
			}
		}
	}
}
