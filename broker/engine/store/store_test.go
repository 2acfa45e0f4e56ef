package store

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// forEachStore runs body against a new memory store and a new Pebble store
// (in a temporary directory, syncing), with and without its cache of
// recent puts (so that Bodies reads from Pebble too), as nats-server's store tests run one
// body against every store.
func forEachStore(t *testing.T, body func(t *testing.T, s Store)) {
	t.Helper()
	t.Run("memory", func(t *testing.T) {
		s := NewMemory()
		t.Cleanup(func() { _ = s.Close() })
		body(t, s)
	})
	t.Run("pebble", func(t *testing.T) {
		body(t, openTestPebble(t, t.TempDir()))
	})
	t.Run("pebble-nocache", func(t *testing.T) {
		s, err := OpenPebble(t.TempDir(), PebbleOptions{MemTableSize: 4 << 20, CacheSize: 8 << 20, BodyCacheSize: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		body(t, s)
	})
}

// openTestPebble opens a Pebble store that the test closes at its end.
func openTestPebble(t *testing.T, dir string) *Pebble {
	t.Helper()
	s, err := OpenPebble(dir, PebbleOptions{MemTableSize: 4 << 20, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// apply applies b and waits for it.
func apply(t *testing.T, s Store, b *Batch) {
	t.Helper()
	p, err := s.Apply(b)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

// loaded is what Load handed to a recordingLoader, in order.
type loaded struct {
	Entities []EntityRecord
	Seqs     []seqRec
	States   []stateRec
	Dups     []DuplicateRecord
	Messages []msgRec
}

type stateRec struct {
	Entity  uint32
	Session string
	State   []byte
	Updated int64
}

type seqRec struct {
	Entity uint32
	Last   int64
}

type msgRec struct {
	Loc  Loc
	Meta Meta
}

func (l *loaded) Entity(rec EntityRecord) error { l.Entities = append(l.Entities, rec); return nil }
func (l *loaded) Sequence(id uint32, last int64) error {
	l.Seqs = append(l.Seqs, seqRec{id, last})
	return nil
}
func (l *loaded) SessionState(id uint32, session string, state []byte, updated int64) error {
	l.States = append(l.States, stateRec{id, session, state, updated})
	return nil
}
func (l *loaded) Duplicate(r DuplicateRecord) error { l.Dups = append(l.Dups, r); return nil }
func (l *loaded) Message(loc Loc, meta Meta) error {
	l.Messages = append(l.Messages, msgRec{loc, meta})
	return nil
}

func load(t *testing.T, s Store) loaded {
	t.Helper()
	var l loaded
	if err := s.Load(&l); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return l
}

// testMessage returns a message and its meta for sequence number seq.
func testMessage(seq int64) (*broker.Message, Meta) {
	m := &broker.Message{
		MessageID:             fmt.Sprintf("msg-%d", seq),
		SessionID:             "s",
		Body:                  []byte(fmt.Sprintf("body %d", seq)),
		SequenceNumber:        seq,
		EnqueuedTime:          utc(1700000000+seq, 0),
		Size:                  100 + seq,
		ApplicationProperties: map[string]any{"n": seq},
	}
	return m, Meta{EnqueuedTime: m.EnqueuedTime.UnixNano(), Size: m.Size, SessionID: "s", MessageID: m.MessageID}
}

func putMessage(t *testing.T, s Store, loc Loc) (*broker.Message, Meta) {
	t.Helper()
	m, meta := testMessage(loc.Seq)
	var b Batch
	b.PutMessage(loc, meta, m)
	apply(t, s, &b)
	return m, meta
}

func wantNotFound(t *testing.T, s Store, loc Loc) {
	t.Helper()
	m, err := s.Get(loc)
	if !errors.Is(err, broker.ErrMessageNotFound) || m != nil {
		t.Fatalf("Get(%+v) = %v, %v; want ErrMessageNotFound", loc, m, err)
	}
	if want := fmt.Sprintf("message not found: no stored message with sequence number %d", loc.Seq); err.Error() != want {
		t.Fatalf("err = %q, want %q", err, want)
	}
}

func TestStorePutGet(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		loc := Loc{Entity: 1, Seq: 42}
		m := fullMessage()
		meta := Meta{State: broker.StateScheduled, DeliveryCount: 9, MessageID: "id-1"}
		var b Batch
		b.PutMessage(loc, meta, m)
		apply(t, s, &b)

		got, err := s.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		want := m.Clone()
		want.State, want.DeliveryCount = broker.StateScheduled, 9
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Get:\n got %#v\nwant %#v", got, want)
		}
		wantNotFound(t, s, Loc{Entity: 1, Seq: 43})
		wantNotFound(t, s, Loc{Entity: 1, Sub: broker.SubQueueDeadLetter, Seq: 42})
		wantNotFound(t, s, Loc{Entity: 2, Seq: 42})
	})
}

func TestStorePutMeta(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		loc := Loc{Entity: 3, Seq: 1}
		m, meta := putMessage(t, s, loc)
		meta.State, meta.DeliveryCount = broker.StateDeferred, 2
		var b Batch
		b.PutMeta(loc, meta)
		apply(t, s, &b)

		got, err := s.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != broker.StateDeferred || got.DeliveryCount != 2 || got.MessageID != m.MessageID || string(got.Body) != "body 1" {
			t.Fatalf("Get after PutMeta = %+v", got)
		}
		if m.State != broker.StateActive || m.DeliveryCount != 0 {
			t.Fatalf("the stored message was changed: %+v", m)
		}
		if l := load(t, s); !reflect.DeepEqual(l.Messages, []msgRec{{loc, meta}}) {
			t.Fatalf("Load messages = %+v", l.Messages)
		}
	})
}

// TestMemoryOrphanMetas checks that the memory store drops and counts a
// meta of a message that is not stored, whether the message was never
// there, was deleted by an earlier batch or by an earlier op of the same
// batch: the count is how the engine's tests catch a breach of the
// PutMeta contract.
func TestMemoryOrphanMetas(t *testing.T) {
	s := NewMemory()
	meta := Meta{State: broker.StateDeferred, DeliveryCount: 5}
	never, deleted, sameBatch, entityGone := Loc{Entity: 1, Seq: 1}, Loc{Entity: 1, Seq: 2}, Loc{Entity: 1, Seq: 3}, Loc{Entity: 2, Seq: 1}
	putMessage(t, s, deleted)
	putMessage(t, s, sameBatch)
	putMessage(t, s, entityGone)
	var b Batch
	b.DeleteMessage(deleted)
	apply(t, s, &b)
	if n := s.OrphanMetas(); n != 0 {
		t.Fatalf("OrphanMetas = %d before any orphan", n)
	}

	b.Reset()
	b.PutMeta(never, meta)
	b.PutMeta(deleted, meta)
	b.DeleteMessage(sameBatch)
	b.PutMeta(sameBatch, meta)
	b.DeleteEntity(2)
	b.PutMeta(entityGone, meta)
	apply(t, s, &b)

	for _, loc := range []Loc{never, deleted, sameBatch, entityGone} {
		wantNotFound(t, s, loc)
	}
	if l := load(t, s); len(l.Messages) != 0 {
		t.Fatalf("Load messages = %+v, want none", l.Messages)
	}
	if n := s.OrphanMetas(); n != 4 {
		t.Fatalf("OrphanMetas = %d, want 4", n)
	}
}

// TestStorePutMetaSameBatch checks the meta of a message put earlier in the
// same batch.
func TestStorePutMetaSameBatch(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		before, after := Loc{Entity: 1, Seq: 1}, Loc{Entity: 1, Seq: 2}
		m1, meta1 := testMessage(1)
		m2, meta2 := testMessage(2)
		var b Batch
		b.PutMessage(before, meta1, m1)
		b.PutMessage(after, meta2, m2)
		meta2.DeliveryCount = 4
		b.PutMeta(after, meta2)
		apply(t, s, &b)

		want := []msgRec{{before, meta1}, {after, meta2}}
		if l := load(t, s); !reflect.DeepEqual(l.Messages, want) {
			t.Fatalf("Load messages = %+v, want %+v", l.Messages, want)
		}
	})
}

// TestStoreBatchOrderPerKey applies one batch that changes the same
// messages several times, interleaved: each message ends as its last op
// left it, whichever order the store writes different keys in (the
// Pebble store writes the bodies first: see bodiesFirst).
func TestStoreBatchOrderPerKey(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		a, b2, c := Loc{Entity: 1, Seq: 1}, Loc{Entity: 1, Seq: 2}, Loc{Entity: 1, Seq: 3}
		ma, metaA := testMessage(1)
		mb, metaB := testMessage(2)
		mc, metaC := testMessage(3)
		again := *ma
		again.Body = []byte("put again")
		var b Batch
		b.PutMessage(a, metaA, ma)
		b.PutMessage(b2, metaB, mb)
		b.DeleteMessage(a)
		b.PutMessage(c, metaC, mc)
		b.PutMessage(a, metaA, &again) // a again, after its delete
		b.DeleteMessage(b2)            // b2 gone
		metaC.DeliveryCount = 7
		b.PutMeta(c, metaC)
		apply(t, s, &b)

		wantNotFound(t, s, b2)
		out := make([]*broker.Message, 3)
		if err := s.Bodies([]Loc{a, b2, c}, out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out[0], &again) || out[1] != nil || !reflect.DeepEqual(out[2], mc) {
			t.Fatalf("Bodies = %+v", out)
		}
		want := []msgRec{{a, metaA}, {c, metaC}}
		if l := load(t, s); !reflect.DeepEqual(l.Messages, want) {
			t.Fatalf("Load messages = %+v, want %+v", l.Messages, want)
		}
	})
}

func TestStoreDeleteMessage(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		keep, gone := Loc{Entity: 1, Seq: 1}, Loc{Entity: 1, Seq: 2}
		putMessage(t, s, keep)
		putMessage(t, s, gone)
		var b Batch
		b.DeleteMessage(gone)
		b.DeleteMessage(Loc{Entity: 9, Seq: 9}) // not stored: no error
		apply(t, s, &b)
		wantNotFound(t, s, gone)
		if _, err := s.Get(keep); err != nil {
			t.Fatal(err)
		}
		if l := load(t, s); len(l.Messages) != 1 || l.Messages[0].Loc != keep {
			t.Fatalf("Load messages = %+v", l.Messages)
		}
	})
}

// TestStoreDeleteEntity deletes an entity between two others (and the
// last possible entity ID): its definition, sequence and messages of both
// sub-queues go, the neighbours' stay.
func TestStoreDeleteEntity(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ids := []uint32{1, 2, 3, math.MaxUint32}
		var b Batch
		for _, id := range ids {
			b.PutEntity(EntityRecord{ID: id, Entity: broker.Entity{Path: fmt.Sprint("q", id)}})
			b.SetSequence(id, 10)
			for _, sub := range []broker.SubQueue{broker.SubQueueMain, broker.SubQueueDeadLetter, broker.SubQueueTransferDeadLetter} {
				for seq := int64(1); seq <= 3; seq++ {
					m, meta := testMessage(seq)
					b.PutMessage(Loc{id, sub, seq}, meta, m)
				}
			}
		}
		apply(t, s, &b)

		b.Reset()
		b.DeleteEntity(2)
		b.DeleteEntity(math.MaxUint32)
		apply(t, s, &b)

		l := load(t, s)
		if len(l.Entities) != 2 || l.Entities[0].ID != 1 || l.Entities[1].ID != 3 {
			t.Fatalf("entities after delete: %+v", l.Entities)
		}
		if want := []seqRec{{1, 10}, {3, 10}}; !reflect.DeepEqual(l.Seqs, want) {
			t.Fatalf("sequences after delete: %+v, want %+v", l.Seqs, want)
		}
		if len(l.Messages) != 18 || l.Messages[0].Loc.Entity != 1 || l.Messages[17].Loc.Entity != 3 {
			t.Fatalf("messages after delete: %d, first %+v", len(l.Messages), l.Messages[0].Loc)
		}
		for _, id := range []uint32{2, math.MaxUint32} {
			wantNotFound(t, s, Loc{id, broker.SubQueueMain, 1})
			wantNotFound(t, s, Loc{id, broker.SubQueueDeadLetter, 3})
			wantNotFound(t, s, Loc{id, broker.SubQueueTransferDeadLetter, 2})
		}
		if _, err := s.Get(Loc{3, broker.SubQueueDeadLetter, 3}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(Loc{3, broker.SubQueueTransferDeadLetter, 3}); err != nil {
			t.Fatal(err)
		}

		// The entity ID is not reused by the engine, but the store lets a
		// later batch write under it again.
		putMessage(t, s, Loc{Entity: 2, Seq: 4})
		if _, err := s.Get(Loc{Entity: 2, Seq: 4}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStoreSequence(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		var b Batch
		b.SetSequence(5, 1)
		b.SetSequence(5, 100)
		b.SetSequence(4, -1)
		apply(t, s, &b)
		b.Reset()
		b.SetSequence(5, 101)
		apply(t, s, &b)
		if want := []seqRec{{4, -1}, {5, 101}}; !reflect.DeepEqual(load(t, s).Seqs, want) {
			t.Fatalf("sequences = %+v, want %+v", load(t, s).Seqs, want)
		}
	})
}

func TestStoreEntityRecord(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		rec := fullEntity()
		var b Batch
		b.PutEntity(rec)
		apply(t, s, &b)
		l := load(t, s)
		if len(l.Entities) != 1 || !reflect.DeepEqual(l.Entities[0], rec) {
			t.Fatalf("entities = %#v, want %#v", l.Entities, rec)
		}
		rec.Entity.Settings.LockDuration = 0
		rec.Entity.Rules = nil
		b.Reset()
		b.PutEntity(rec)
		apply(t, s, &b)
		if l := load(t, s); len(l.Entities) != 1 || !reflect.DeepEqual(l.Entities[0], rec) {
			t.Fatalf("entities after update = %#v, want %#v", l.Entities, rec)
		}
	})
}

// TestStoreLoadOrder stores entities, sequences and messages in random
// order; Load hands them over sorted.
func TestStoreLoadOrder(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		rng := rand.New(rand.NewPCG(1, 2))
		var want loaded
		var b Batch
		for id := uint32(1); id <= 3; id++ {
			want.Entities = append(want.Entities, EntityRecord{ID: id, Entity: broker.Entity{Path: fmt.Sprint("q", id)}})
			want.Seqs = append(want.Seqs, seqRec{id, int64(id) * 1000})
			for _, sub := range []broker.SubQueue{broker.SubQueueMain, broker.SubQueueDeadLetter, broker.SubQueueTransferDeadLetter} {
				for _, seq := range []int64{1, 2, 255, 256, 65536, 1 << 40} {
					_, meta := testMessage(seq)
					want.Messages = append(want.Messages, msgRec{Loc{id, sub, seq}, meta})
				}
			}
		}
		ents, seqs, msgs := slicesShuffled(rng, want.Entities), slicesShuffled(rng, want.Seqs), slicesShuffled(rng, want.Messages)
		for i := range msgs {
			m, _ := testMessage(msgs[i].Loc.Seq)
			b.PutMessage(msgs[i].Loc, msgs[i].Meta, m)
		}
		for _, r := range seqs {
			b.SetSequence(r.Entity, r.Last)
		}
		for _, e := range ents {
			b.PutEntity(e)
		}
		apply(t, s, &b)
		if got := load(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("Load:\n got %+v\nwant %+v", got, want)
		}
	})
}

func slicesShuffled[T any](rng *rand.Rand, s []T) []T {
	c := append([]T(nil), s...)
	rng.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
	return c
}

// TestStoreLoadStopsOnError checks that an error of the Loader ends Load
// and is returned unchanged.
func TestStoreLoadStopsOnError(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		putMessage(t, s, Loc{Entity: 1, Seq: 1})
		putMessage(t, s, Loc{Entity: 1, Seq: 2})
		stop := errors.New("stop")
		n := 0
		err := s.Load(loaderFunc(func(Loc, Meta) error { n++; return stop }))
		if err != stop || n != 1 {
			t.Fatalf("Load = %v after %d messages, want stop after 1", err, n)
		}
	})
}

type loaderFunc func(Loc, Meta) error

func (loaderFunc) Entity(EntityRecord) error                        { return nil }
func (loaderFunc) Sequence(uint32, int64) error                     { return nil }
func (loaderFunc) SessionState(uint32, string, []byte, int64) error { return nil }
func (loaderFunc) Duplicate(DuplicateRecord) error                  { return nil }
func (f loaderFunc) Message(loc Loc, meta Meta) error               { return f(loc, meta) }

// TestStoreInvalidBatch checks that a batch with a bad op is refused with
// CodeInvalid and that none of it is applied.
func TestStoreInvalidBatch(t *testing.T) {
	cases := map[string]struct {
		op   func(b *Batch)
		want string
	}{
		"property type": {
			func(b *Batch) {
				b.PutMessage(Loc{Entity: 1, Seq: 2}, Meta{}, &broker.Message{ApplicationProperties: map[string]any{"n": 1}})
			},
			`invalid request: application property "n" has unsupported type int`,
		},
		"nil message": {
			func(b *Batch) { b.PutMessage(Loc{Entity: 1, Seq: 2}, Meta{}, nil) },
			"invalid request: put of message 2 without a message",
		},
		"filter property type": {
			func(b *Batch) {
				b.PutEntity(EntityRecord{ID: 2, Entity: broker.Entity{Rules: []broker.Rule{{Name: "r", Filter: &broker.CorrelationFilter{Properties: map[string]any{"p": uint(1)}}}}}})
			},
			`invalid request: rule "r" filter property "p" has unsupported type uint`,
		},
		"op kind": {
			func(b *Batch) { b.Ops = append(b.Ops, Op{Kind: 99}) },
			"invalid request: unknown store op kind 99",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, s Store) {
				var b Batch
				m, meta := testMessage(1)
				b.PutMessage(Loc{Entity: 1, Seq: 1}, meta, m)
				b.SetSequence(1, 2)
				c.op(&b)
				p, err := s.Apply(&b)
				if p != nil || broker.CodeOf(err) != broker.CodeInvalid || err.Error() != c.want {
					t.Fatalf("Apply = %v, %v; want nil, %q", p, err, c.want)
				}
				if l := load(t, s); !reflect.DeepEqual(l, loaded{}) {
					t.Fatalf("a refused batch was applied: %+v", l)
				}
			})
		})
	}
}

func TestStoreEmptyBatchAndWaitTwice(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		p, err := s.Apply(&Batch{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		m, meta := testMessage(1)
		var b Batch
		b.PutMessage(Loc{Entity: 1, Seq: 1}, meta, m)
		p, err = s.Apply(&b)
		if err != nil {
			t.Fatal(err)
		}
		// Visible before Wait, as the interface promises.
		if _, err := s.Get(Loc{Entity: 1, Seq: 1}); err != nil {
			t.Fatalf("Get before Wait: %v", err)
		}
		for range 2 {
			if err := p.Wait(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestStoreConcurrentApply runs writers that put, update and delete their
// own messages at the same time, waiting on each batch from several
// goroutines; the result is exact.
func TestStoreConcurrentApply(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		const writers, each = 16, 50
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					loc := Loc{Entity: uint32(w + 1), Seq: int64(i + 1)}
					m, meta := testMessage(loc.Seq)
					var b Batch
					b.PutMessage(loc, meta, m)
					b.SetSequence(loc.Entity, loc.Seq)
					meta.DeliveryCount = 1
					b.PutMeta(loc, meta)
					p, err := s.Apply(&b)
					if err != nil {
						errs <- err
						return
					}
					var waits sync.WaitGroup
					for range 2 {
						waits.Go(func() {
							if err := p.Wait(); err != nil {
								errs <- err
							}
						})
					}
					waits.Wait()
					if i%2 == 1 {
						b.Reset()
						b.DeleteMessage(loc)
						if p, err = s.Apply(&b); err == nil {
							err = p.Wait()
						}
						if err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		l := load(t, s)
		if len(l.Messages) != writers*each/2 || len(l.Seqs) != writers {
			t.Fatalf("%d messages and %d sequences, want %d and %d", len(l.Messages), len(l.Seqs), writers*each/2, writers)
		}
		for i, r := range l.Messages {
			w, k := i/(each/2), i%(each/2)
			want := Loc{Entity: uint32(w + 1), Seq: int64(2*k + 1)}
			if r.Loc != want || r.Meta.DeliveryCount != 1 {
				t.Fatalf("message %d = %+v, want at %+v with delivery count 1", i, r, want)
			}
		}
		for _, r := range l.Seqs {
			if r.Last != each {
				t.Fatalf("sequence %+v, want %d", r, each)
			}
		}
	})
}

// TestStoreDeleteEntityThenPut deletes an entity and puts a message and a
// meta under its ID in the same batch: the later ops win.
func TestStoreDeleteEntityThenPut(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		old, fresh := Loc{Entity: 4, Seq: 1}, Loc{Entity: 4, Seq: 2}
		putMessage(t, s, old)
		m, meta := testMessage(2)
		var b Batch
		b.DeleteEntity(4)
		b.PutMessage(fresh, meta, m)
		meta.DeliveryCount = 2
		b.PutMeta(fresh, meta)
		b.SetSequence(4, 2)
		apply(t, s, &b)
		wantNotFound(t, s, old)
		want := loaded{Seqs: []seqRec{{4, 2}}, Messages: []msgRec{{fresh, meta}}}
		if got := load(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("Load = %+v, want %+v", got, want)
		}
	})
}

// TestStoreBodies checks Bodies on locations out of key order, across
// entities and sub-queues, with missing ones among them, after a meta
// change that Bodies must not show, and for one and for no location.
func TestStoreBodies(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		stored := []Loc{
			{Entity: 1, Seq: 1}, {Entity: 1, Seq: 2}, {Entity: 1, Seq: 5},
			{Entity: 1, Sub: broker.SubQueueDeadLetter, Seq: 3}, {Entity: 2, Seq: 4},
		}
		want := make(map[Loc]*broker.Message)
		for _, loc := range stored {
			want[loc], _ = putMessage(t, s, loc)
		}
		var b Batch
		b.PutMeta(stored[0], Meta{State: broker.StateDeferred, DeliveryCount: 9})
		apply(t, s, &b)

		locs := []Loc{
			{Entity: 2, Seq: 4}, {Entity: 1, Seq: 3}, {Entity: 1, Seq: 5}, {Entity: 1, Seq: 1},
			{Entity: 1, Sub: broker.SubQueueDeadLetter, Seq: 3}, {Entity: 3, Seq: 1}, {Entity: 1, Seq: 2},
		}
		out := make([]*broker.Message, len(locs)+1)
		out[len(locs)] = &broker.Message{MessageID: "beyond locs: untouched"}
		if err := s.Bodies(locs, out); err != nil {
			t.Fatal(err)
		}
		for i, loc := range locs {
			if !reflect.DeepEqual(out[i], want[loc]) {
				t.Errorf("Bodies[%d] (%+v) = %+v, want %+v", i, loc, out[i], want[loc])
			}
		}
		if out[len(locs)].MessageID != "beyond locs: untouched" {
			t.Errorf("Bodies wrote past len(locs)")
		}

		one := []*broker.Message{{}}
		if err := s.Bodies([]Loc{{Entity: 1, Seq: 5}}, one); err != nil || !reflect.DeepEqual(one[0], want[Loc{Entity: 1, Seq: 5}]) {
			t.Errorf("Bodies of one = %+v, %v", one[0], err)
		}
		if err := s.Bodies([]Loc{{Entity: 1, Seq: 4}}, one); err != nil || one[0] != nil {
			t.Errorf("Bodies of one missing = %+v, %v; want nil, nil", one[0], err)
		}
		if err := s.Bodies(nil, nil); err != nil {
			t.Errorf("Bodies of none: %v", err)
		}
	})
}
