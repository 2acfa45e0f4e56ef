package store

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// bodiesOf returns what Bodies reads at locs.
func bodiesOf(t *testing.T, s Store, locs ...Loc) []*broker.Message {
	t.Helper()
	out := make([]*broker.Message, len(locs))
	if err := s.Bodies(locs, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPebbleBodyCache follows one message through the cache: a put is read
// back as the message put (the same one, not a decoded copy), a put again
// in place as the new one, a delete or its entity's deletion as none, and
// after a reopen (an empty cache) from Pebble as an equal message.
func TestPebbleBodyCache(t *testing.T) {
	dir := t.TempDir()
	s := openTestPebble(t, dir)
	loc := Loc{Entity: 1, Seq: 1}
	m, _ := putMessage(t, s, loc)
	if got := bodiesOf(t, s, loc)[0]; got != m {
		t.Fatalf("Bodies after the put = %p, want the message put (%p)", got, m)
	}

	again, meta := testMessage(1)
	again.Body = []byte("put again")
	var b Batch
	b.PutMessage(loc, meta, again)
	apply(t, s, &b)
	if got := bodiesOf(t, s, loc)[0]; got != again {
		t.Fatalf("Bodies after a put in place = %+v, want %+v", got, again)
	}

	b.Reset()
	b.DeleteMessage(loc)
	apply(t, s, &b)
	if got := bodiesOf(t, s, loc)[0]; got != nil {
		t.Fatalf("Bodies after the delete = %+v, want nil", got)
	}

	other := Loc{Entity: 2, Seq: 1}
	putMessage(t, s, other)
	kept, _ := putMessage(t, s, loc)
	b.Reset()
	b.DeleteEntity(2)
	apply(t, s, &b)
	if got := bodiesOf(t, s, other, loc); got[0] != nil || got[1] != kept {
		t.Fatalf("Bodies after the entity's deletion = %+v, want nil and the other entity's message", got)
	}
	if n := len(s.cache.m); n != 1 {
		t.Fatalf("cache holds %d messages, want 1", n)
	}

	// Put twice in one batch: the second counts, the first not at all.
	twice := Loc{Entity: 1, Seq: 2}
	m1, meta1 := testMessage(2)
	m2, _ := testMessage(2)
	m2.Body = []byte("the second put, longer than the first")
	b.Reset()
	b.PutMessage(twice, meta1, m1)
	b.PutMessage(twice, meta1, m2)
	apply(t, s, &b)
	if got := bodiesOf(t, s, twice)[0]; got != m2 {
		t.Fatalf("Bodies after two puts in a batch = %+v, want the second", got)
	}
	if want := cacheCost(kept) + cacheCost(m2); s.cache.bytes != want {
		t.Fatalf("cache counts %d bytes, want %d", s.cache.bytes, want)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestPebble(t, dir)
	if got := bodiesOf(t, s, loc)[0]; got == kept || !reflect.DeepEqual(got, kept) {
		t.Fatalf("Bodies after a reopen = %+v (%p), want an equal message read from Pebble", got, got)
	}
}

// TestPebbleBodyCacheBounded puts more than the cache holds: it keeps
// within its size, and Bodies reads the messages it dropped from Pebble,
// mixed with those it holds. One message that stays while many after it
// come and go does not make the cache's ring of puts grow without bound.
func TestPebbleBodyCacheBounded(t *testing.T) {
	const size = 16 << 10
	s, err := OpenPebble(t.TempDir(), PebbleOptions{BodyCacheSize: size, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	const n = 200
	var b Batch
	locs := make([]Loc, n)
	want := make([]*broker.Message, n)
	for i := range n {
		locs[i] = Loc{Entity: 1, Seq: int64(i + 1)}
		m, meta := testMessage(int64(i + 1))
		m.Body = make([]byte, 100)
		want[i] = m
		b.PutMessage(locs[i], meta, m)
		if i%10 == 9 {
			apply(t, s, &b)
			b.Reset()
		}
	}
	c := s.cache
	if c.bytes > size || int64(c.n)*cacheOverhead > size || len(c.m) > c.n {
		t.Fatalf("cache holds %d bytes in %d messages, %d puts in its ring; its size is %d", c.bytes, len(c.m), c.n, size)
	}
	if len(c.m) == 0 || len(c.m) == n {
		t.Fatalf("cache holds %d of %d messages; want some, not all", len(c.m), n)
	}
	got := bodiesOf(t, s, locs...)
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("Bodies[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}

	// The last message stays; thousands after it are put and deleted.
	stay := locs[n-1]
	for i := range 5000 {
		loc := Loc{Entity: 1, Seq: int64(n + 1 + i)}
		m, meta := testMessage(loc.Seq)
		b.Reset()
		b.PutMessage(loc, meta, m)
		apply(t, s, &b)
		b.Reset()
		b.DeleteMessage(loc)
		apply(t, s, &b)
	}
	if int64(c.n)*cacheOverhead > size {
		t.Fatalf("cache's ring holds %d puts, more than its size (%d bytes) allows", c.n, size)
	}
	if got := bodiesOf(t, s, stay)[0]; !reflect.DeepEqual(got, want[n-1]) {
		t.Fatalf("Bodies of the message that stayed = %+v", got)
	}
}

// TestPebbleBodyCacheConcurrent applies and reads on several entities at
// once (for the race detector): each writer puts, reads and deletes its
// own entity's messages, as the engine does under each entity's mutex.
func TestPebbleBodyCacheConcurrent(t *testing.T) {
	s, err := OpenPebble(t.TempDir(), PebbleOptions{BodyCacheSize: 64 << 10, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entity := uint32(w%4 + 1) // two writers per entity: the cache orders them
			var b Batch
			for i := range 200 {
				loc := Loc{Entity: entity, Seq: int64(w*1000 + i)}
				m, meta := testMessage(loc.Seq)
				b.Reset()
				b.PutMessage(loc, meta, m)
				if _, err := s.Apply(&b); err != nil {
					errs <- err
					return
				}
				out := make([]*broker.Message, 1)
				if err := s.Bodies([]Loc{loc}, out); err != nil || !reflect.DeepEqual(out[0], m) {
					errs <- fmt.Errorf("Bodies(%+v) = %+v, %v", loc, out[0], err)
					return
				}
				b.Reset()
				b.DeleteMessage(loc)
				if _, err := s.Apply(&b); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(s.cache.m) != 0 {
		t.Fatalf("cache holds %d messages after every one was deleted", len(s.cache.m))
	}
}

// TestPebbleBodiesAllocs guards the allocations of a receive's read of
// messages sent just before: none, when the cache holds them.
func TestPebbleBodiesAllocs(t *testing.T) {
	s := openTestPebble(t, t.TempDir())
	var b Batch
	locs := make([]Loc, 64)
	for i := range locs {
		locs[i] = Loc{Entity: 1, Seq: int64(i + 1)}
		m, meta := testMessage(int64(i + 1))
		b.PutMessage(locs[i], meta, m)
	}
	apply(t, s, &b)
	out := make([]*broker.Message, len(locs))
	if n := testing.AllocsPerRun(100, func() {
		if err := s.Bodies(locs, out); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Bodies of 64 cached messages: %.1f allocations, want 0", n)
	}
}

// TestPebbleLoopAllocs guards the store's allocations in the durable loop's
// shape: 64 messages put (synced), read back and deleted (synced), per
// message. The messages themselves are the caller's.
func TestPebbleLoopAllocs(t *testing.T) {
	s := openTestPebble(t, t.TempDir())
	load(t, s) // so that the deletes are single deletes
	const batch = 64
	msgs := make([]*broker.Message, batch)
	metas := make([]Meta, batch)
	for i := range msgs {
		msgs[i], metas[i] = testMessage(int64(i))
	}
	locs := make([]Loc, batch)
	out := make([]*broker.Message, batch)
	var b Batch
	seq := int64(0)
	round := func() {
		b.Reset()
		for i := range locs {
			seq++
			locs[i] = Loc{Entity: 1, Seq: seq}
			b.PutMessage(locs[i], metas[i], msgs[i])
		}
		apply(t, s, &b)
		if err := s.Bodies(locs, out); err != nil || out[batch-1] != msgs[batch-1] {
			t.Fatalf("Bodies: %v", err)
		}
		b.Reset()
		for _, loc := range locs {
			b.DeleteMessage(loc)
		}
		apply(t, s, &b)
	}
	round()
	perMessage := testing.AllocsPerRun(50, round) / batch
	t.Logf("%.2f allocations per message", perMessage)
	if perMessage > 0.25 {
		t.Fatalf("%.2f allocations per message, budget 0.25", perMessage)
	}
}
