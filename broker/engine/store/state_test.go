package store

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// TestSessionStateAndDuplicates stores session states and duplicate-detection
// records, replaces and deletes some, and checks what Load hands over, in
// order, and that deleting an entity takes its records along.
func TestSessionStateAndDuplicates(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		var b Batch
		b.PutEntity(EntityRecord{ID: 1, Entity: broker.Entity{Path: "q1"}})
		b.PutEntity(EntityRecord{ID: 2, Entity: broker.Entity{Path: "q2"}})
		b.SetSessionState(2, "b", []byte("two-b"), 20)
		b.SetSessionState(1, "z", []byte("old"), 10)
		b.SetSessionState(1, "z", []byte("one-z"), 11)
		b.SetSessionState(1, "a", []byte{}, 0)
		b.SetSessionState(1, "gone", []byte("x"), 12)
		b.SetSessionState(1, "gone", nil, 13)
		b.PutDuplicate(DuplicateRecord{Entity: 1, ID: "m2", End: 200})
		b.PutDuplicate(DuplicateRecord{Entity: 1, ID: "m1", End: 300})
		b.PutDuplicate(DuplicateRecord{Entity: 1, ID: "m0", End: 200})
		b.PutDuplicate(DuplicateRecord{Entity: 1, ID: "forever", End: math.MaxInt64})
		b.PutDuplicate(DuplicateRecord{Entity: 1, ID: "m1", End: 100})
		b.DeleteDuplicate(DuplicateRecord{Entity: 1, ID: "m1", End: 100})
		b.DeleteDuplicate(DuplicateRecord{Entity: 1, ID: "never-stored", End: 5})
		b.PutDuplicate(DuplicateRecord{Entity: 2, ID: "", End: -1})
		apply(t, s, &b)

		l := load(t, s)
		wantStates := []stateRec{{1, "a", []byte{}, 0}, {1, "z", []byte("one-z"), 11}, {2, "b", []byte("two-b"), 20}}
		if !reflect.DeepEqual(l.States, wantStates) {
			t.Fatalf("states = %v, want %v", l.States, wantStates)
		}
		if l.States[0].State == nil {
			t.Fatal("an empty state was loaded as nil")
		}
		wantDups := []DuplicateRecord{
			{1, "m0", 200}, {1, "m2", 200}, {1, "m1", 300}, {1, "forever", math.MaxInt64}, {2, "", -1},
		}
		if !reflect.DeepEqual(l.Dups, wantDups) {
			t.Fatalf("duplicates = %v, want %v", l.Dups, wantDups)
		}

		b.Reset()
		b.DeleteEntity(1)
		apply(t, s, &b)
		l = load(t, s)
		if want := []stateRec{{2, "b", []byte("two-b"), 20}}; !reflect.DeepEqual(l.States, want) {
			t.Fatalf("states after deleting entity 1 = %v, want %v", l.States, want)
		}
		if want := []DuplicateRecord{{2, "", -1}}; !reflect.DeepEqual(l.Dups, want) {
			t.Fatalf("duplicates after deleting entity 1 = %v, want %v", l.Dups, want)
		}
	})
}

// TestNilSessionStateRefused: an op that sets a nil state (built by hand,
// not by Batch.SetSessionState) is refused by both stores, and nothing of
// its batch is applied.
func TestNilSessionStateRefused(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		b := Batch{Ops: []Op{
			{Kind: OpPutDuplicate, Loc: Loc{Entity: 1}, ID: "m", End: 1},
			{Kind: OpSetSessionState, Loc: Loc{Entity: 1}, ID: "s"},
		}}
		_, err := s.Apply(&b)
		if broker.CodeOf(err) != broker.CodeInvalid {
			t.Fatalf("Apply = %v, want CodeInvalid", err)
		}
		if want := `invalid request: state of session "s" set to nil; delete it instead`; err.Error() != want {
			t.Fatalf("err = %q, want %q", err, want)
		}
		if l := load(t, s); len(l.Dups) != 0 || len(l.States) != 0 {
			t.Fatalf("loaded %v and %v after a refused batch", l.Dups, l.States)
		}
	})
}

// TestPebbleStateAndDuplicatesSurviveReopen reopens a Pebble store and
// finds its session states and duplicate-detection records.
func TestPebbleStateAndDuplicatesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s := openTestPebble(t, dir)
	var b Batch
	b.SetSessionState(7, "sess", []byte{0, 1, 2}, 1_735_787_045_123_456_789)
	b.PutDuplicate(DuplicateRecord{Entity: 7, ID: "id-\x00-é", End: 42})
	apply(t, s, &b)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	l := load(t, openTestPebble(t, dir))
	if want := []stateRec{{7, "sess", []byte{0, 1, 2}, 1_735_787_045_123_456_789}}; !reflect.DeepEqual(l.States, want) {
		t.Fatalf("states = %v, want %v", l.States, want)
	}
	if want := []DuplicateRecord{{7, "id-\x00-é", 42}}; !reflect.DeepEqual(l.Dups, want) {
		t.Fatalf("duplicates = %v, want %v", l.Dups, want)
	}
}

// TestSessionStateEncoding: a state carries the time it was set; a state
// written before the time was (the codec version, then the bytes) reads
// with time 0, and an unknown version is corrupt.
func TestSessionStateEncoding(t *testing.T) {
	for _, c := range []struct {
		state   []byte
		updated int64
	}{{[]byte("st"), 1_735_787_045_000_000_001}, {[]byte{}, 0}, {[]byte{0xff}, -1}} {
		state, updated, err := decodeSessionState(appendSessionState(nil, c.state, c.updated))
		if err != nil || string(state) != string(c.state) || state == nil || updated != c.updated {
			t.Errorf("round trip of %q at %d: %q at %d, %v", c.state, c.updated, state, updated, err)
		}
	}
	state, updated, err := decodeSessionState([]byte{codecVersion, 'o', 'l', 'd'})
	if err != nil || string(state) != "old" || updated != 0 {
		t.Errorf("a state of the first encoding: %q at %d, %v", state, updated, err)
	}
	for _, b := range [][]byte{nil, {3, 'x'}, {stateVersion}, {stateVersion, 0x80}} {
		if _, _, err := decodeSessionState(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode % x: %v, want ErrCorrupt", b, err)
		}
	}
}
