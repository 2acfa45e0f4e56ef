package store

import (
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/peeklock/peeklock/broker"
)

// openMisuseCounting opens a Pebble store in dir that counts the misuses
// Pebble reports (a single delete that met a second Set).
func openMisuseCounting(t *testing.T, dir string, opts PebbleOptions) (*Pebble, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	opts.misuse = func(info pebble.PossibleAPIMisuseInfo) {
		t.Logf("misuse: %s", info)
		n.Add(1)
	}
	s, err := OpenPebble(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, &n
}

// compactAll flushes the memtables and compacts every level, so that every
// single delete meets what it deletes.
func compactAll(t *testing.T, s *Pebble) {
	t.Helper()
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Compact(t.Context(), []byte{0}, []byte{0xff}, false); err != nil {
		t.Fatal(err)
	}
}

// planOfDelete returns the plan bits that deleting loc alone would have,
// leaving the cache as it is (planDeletes forgets what it deletes).
func planOfDelete(s *Pebble, loc Loc) uint8 {
	s.cache.mu.Lock()
	e, ok := s.cache.m[keyOf(loc)]
	s.cache.mu.Unlock()
	var b Batch
	b.DeleteMessage(loc)
	plan := s.cache.planDeletes(&b, nil)[0]
	if ok {
		s.cache.mu.Lock()
		s.cache.m[keyOf(loc)] = e
		s.cache.bytes += cacheCost(e.msg)
		s.cache.mu.Unlock()
	}
	return plan
}

// TestPebbleSingleDeletes checks which deletes are single deletes (see
// singleDeletes), and that none of them meets a second Set when every level
// is compacted, across a reopen: the messages deleted stay deleted, the
// others stay.
func TestPebbleSingleDeletes(t *testing.T) {
	dir := t.TempDir()
	s, misuses := openMisuseCounting(t, dir, PebbleOptions{})
	put := func(loc Loc) {
		t.Helper()
		putMessage(t, s, loc)
	}
	del := func(loc Loc) {
		t.Helper()
		var b Batch
		b.DeleteMessage(loc)
		apply(t, s, &b)
	}
	early := Loc{Entity: 1, Seq: 1}
	put(early) // before Load: nothing is fresh yet
	if got := planOfDelete(s, early); got != 0 {
		t.Fatalf("delete of a put before Load: plan %b, want none", got)
	}
	load(t, s)

	fresh := Loc{Entity: 1, Seq: 2}
	put(fresh)
	if got := planOfDelete(s, fresh); got != planDelBody|planDelMeta {
		t.Fatalf("delete of a fresh put: plan %b, want both keys single-deleted", got)
	}
	del(fresh)

	again := Loc{Entity: 1, Seq: 3}
	put(again)
	put(again) // put in place again: two Sets
	if got := planOfDelete(s, again); got != 0 {
		t.Fatalf("delete of a message put twice: plan %b, want none", got)
	}
	del(again)

	meta := Loc{Entity: 1, Seq: 4}
	_, m := putMessage(t, s, meta)
	var b Batch
	m.DeliveryCount = 2
	b.PutMeta(meta, m)
	apply(t, s, &b)
	if got := planOfDelete(s, meta); got != planDelBody {
		t.Fatalf("delete of a message whose meta was put again: plan %b, want the body alone", got)
	}
	del(meta)

	dead := Loc{Entity: 1, Sub: broker.SubQueueDeadLetter, Seq: 5}
	live := Loc{Entity: 1, Seq: 5}
	put(live)
	msg, mm := testMessage(5)
	b.Reset()
	b.PutMessage(dead, mm, msg) // moved to the dead-letter sub-queue: its number is known
	b.DeleteMessage(live)       // a batch with a put single-deletes nothing
	if got := s.cache.planDeletes(&b, nil); got[0] != 0 || got[1] != 0 {
		t.Fatalf("dead-lettering: plan %v, want none", got)
	}
	apply(t, s, &b)
	if got := planOfDelete(s, dead); got != 0 {
		t.Fatalf("delete of a dead-lettered message: plan %b, want none", got)
	}

	kept := Loc{Entity: 2, Seq: 1}
	put(kept)
	gone := Loc{Entity: 2, Seq: 9}
	put(gone)
	del(gone)
	compactAll(t, s)
	if n := misuses.Load(); n != 0 {
		t.Fatalf("%d single deletes met a second Set", n)
	}
	for _, loc := range []Loc{fresh, again, meta, live, gone} {
		wantNotFound(t, s, loc)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened: the messages stored are not fresh (Load read their
	// numbers); a number above them is, even one used and deleted before
	// (entity 2's 9, above its stored 1).
	s, misuses = openMisuseCounting(t, dir, PebbleOptions{})
	load(t, s)
	putMessage(t, s, kept) // in place again
	if got := planOfDelete(s, kept); got != 0 {
		t.Fatalf("delete of a stored message put again after a reopen: plan %b, want none", got)
	}
	reused := Loc{Entity: 2, Seq: 9}
	putMessage(t, s, reused)
	if got := planOfDelete(s, reused); got != planDelBody|planDelMeta {
		t.Fatalf("delete of a fresh put of a number deleted before: plan %b, want both", got)
	}
	for _, loc := range []Loc{kept, reused, early} {
		var b Batch
		b.DeleteMessage(loc)
		apply(t, s, &b)
	}
	compactAll(t, s)
	if n := misuses.Load(); n != 0 {
		t.Fatalf("%d single deletes met a second Set", n)
	}
	for _, loc := range []Loc{kept, reused, early} {
		wantNotFound(t, s, loc)
	}
	if got := load(t, s); !reflect.DeepEqual(got.Messages, []msgRec{{dead, mm}}) {
		t.Fatalf("Load messages = %+v, want the dead-lettered one", got.Messages)
	}
}

// TestPebbleSingleDeleteEvicted deletes a fresh message the cache no
// longer holds: with a tombstone, as the cache knows nothing of it.
func TestPebbleSingleDeleteEvicted(t *testing.T) {
	s, _ := openMisuseCounting(t, t.TempDir(), PebbleOptions{BodyCacheSize: 4 << 10, NoSync: true})
	load(t, s)
	first := Loc{Entity: 1, Seq: 1}
	putMessage(t, s, first)
	for i := range 100 {
		putMessage(t, s, Loc{Entity: 1, Seq: int64(i + 2)})
	}
	if got := planOfDelete(s, first); got != 0 {
		t.Fatalf("delete of an evicted message: plan %b, want none", got)
	}
}

// TestPebbleMisuseReported is the counter-check of TestPebbleSingleDeletes:
// a key set twice and single-deleted is reported when compacted, so a
// wrong single delete would fail those tests.
func TestPebbleMisuseReported(t *testing.T) {
	s, misuses := openMisuseCounting(t, t.TempDir(), PebbleOptions{})
	k := []byte("x")
	for _, op := range []func() error{
		func() error { return s.db.Set(k, []byte("1"), pebble.Sync) },
		func() error { return s.db.Set(k, []byte("2"), pebble.Sync) },
		func() error { return s.db.SingleDelete(k, pebble.Sync) },
	} {
		if err := op(); err != nil {
			t.Fatal(err)
		}
	}
	compactAll(t, s)
	if misuses.Load() == 0 {
		t.Fatal("a single delete of a key set twice was not reported")
	}
}

// TestPebbleSingleDeletesRandom applies random sends, puts in place, meta
// puts, dead-letterings and deletes to a Pebble store (small memtables and
// cache, so that flushes and evictions happen among them) and to a memory
// store, reopening the Pebble store between rounds: every level compacted,
// no single delete meets a second Set, and both stores hold the same.
func TestPebbleSingleDeletesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	mem := NewMemory()
	var live []Loc
	seq := map[uint32]int64{}
	opts := PebbleOptions{MemTableSize: 1 << 20, BodyCacheSize: 32 << 10, NoSync: true}
	for round := range 3 {
		s, misuses := openMisuseCounting(t, dir, opts)
		if round > 0 || rng.IntN(2) == 0 {
			load(t, s)
		}
		both := func(b *Batch) {
			t.Helper()
			apply(t, s, b)
			apply(t, mem, b)
		}
		pick := func() int { return rng.IntN(len(live)) }
		for range 3000 {
			var b Batch
			switch k := rng.IntN(10); {
			case k < 4 || len(live) == 0: // a send
				e := uint32(rng.IntN(3) + 1)
				for range rng.IntN(8) + 1 {
					seq[e]++
					loc := Loc{Entity: e, Seq: seq[e]}
					m, meta := testMessage(loc.Seq)
					m.Body = make([]byte, 512)
					b.PutMessage(loc, meta, m)
					live = append(live, loc)
				}
				b.SetSequence(e, seq[e])
			case k == 4: // a put in place
				loc := live[pick()]
				m, meta := testMessage(loc.Seq)
				m.Subject = "again"
				b.PutMessage(loc, meta, m)
			case k == 5: // a meta put
				loc := live[pick()]
				_, meta := testMessage(loc.Seq)
				meta.DeliveryCount = uint32(rng.IntN(5))
				b.PutMeta(loc, meta)
			case k == 6: // dead-lettered
				i := pick()
				if live[i].Sub != broker.SubQueueMain {
					continue
				}
				m, meta := testMessage(live[i].Seq)
				to := live[i]
				to.Sub = broker.SubQueueDeadLetter
				b.PutMessage(to, meta, m)
				b.DeleteMessage(live[i])
				live[i] = to
			default: // deletes, a batch of them
				for range rng.IntN(4) + 1 {
					if len(live) == 0 {
						break
					}
					i := pick()
					b.DeleteMessage(live[i])
					live = append(live[:i], live[i+1:]...)
				}
			}
			both(&b)
		}
		compactAll(t, s)
		if n := misuses.Load(); n != 0 {
			t.Fatalf("round %d: %d single deletes met a second Set", round, n)
		}
		if got, want := load(t, s), load(t, mem); !reflect.DeepEqual(got.Messages, want.Messages) {
			t.Fatalf("round %d: Pebble holds %d messages, the memory store %d", round, len(got.Messages), len(want.Messages))
		}
		got, want := make([]*broker.Message, len(live)), make([]*broker.Message, len(live))
		if err := s.Bodies(live, got); err != nil {
			t.Fatal(err)
		}
		if err := mem.Bodies(live, want); err != nil {
			t.Fatal(err)
		}
		for i := range live {
			if got[i] == nil || got[i].Subject != want[i].Subject || got[i].SequenceNumber != want[i].SequenceNumber {
				t.Fatalf("round %d: Bodies(%+v) = %+v, want %+v", round, live[i], got[i], want[i])
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
