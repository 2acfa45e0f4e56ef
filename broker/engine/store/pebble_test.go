package store

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/peeklock/peeklock/broker"
)

// populate writes a mix of every kind of op and returns what Load must
// hand over afterwards, with the messages Get must return.
func populate(t *testing.T, s Store) (loaded, map[Loc]*broker.Message) {
	t.Helper()
	msgs := make(map[Loc]*broker.Message)
	var b Batch
	ent := fullEntity()
	b.PutEntity(ent)
	b.PutEntity(EntityRecord{ID: 8, Entity: broker.Entity{Path: "gone"}})
	b.SetSequence(7, 5)
	b.SetSequence(8, 3)
	for seq := int64(1); seq <= 5; seq++ {
		m, meta := testMessage(seq)
		if seq == 5 {
			m = fullMessage()
		}
		loc := Loc{Entity: 7, Seq: seq}
		if seq == 4 {
			loc.Sub = broker.SubQueueDeadLetter
		}
		b.PutMessage(loc, meta, m)
		b.PutMessage(Loc{Entity: 8, Seq: seq}, meta, m)
	}
	apply(t, s, &b)

	b.Reset()
	b.DeleteEntity(8)
	b.DeleteMessage(Loc{Entity: 7, Seq: 2})
	_, meta3 := testMessage(3)
	meta3.State, meta3.DeliveryCount = broker.StateDeferred, 4
	b.PutMeta(Loc{Entity: 7, Seq: 3}, meta3)
	apply(t, s, &b)

	var want loaded
	if err := s.Load(&want); err != nil {
		t.Fatal(err)
	}
	if len(want.Entities) != 1 || len(want.Seqs) != 1 || len(want.Messages) != 4 {
		t.Fatalf("populated store holds %+v", want)
	}
	for _, r := range want.Messages {
		m, err := s.Get(r.Loc)
		if err != nil {
			t.Fatal(err)
		}
		msgs[r.Loc] = m
	}
	if msgs[Loc{Entity: 7, Seq: 3}].State != broker.StateDeferred {
		t.Fatalf("meta overlay missing: %+v", msgs[Loc{Entity: 7, Seq: 3}])
	}
	return want, msgs
}

func checkContents(t *testing.T, s Store, want loaded, msgs map[Loc]*broker.Message) {
	t.Helper()
	if got := load(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("Load:\n got %+v\nwant %+v", got, want)
	}
	for loc, m := range msgs {
		got, err := s.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("Get(%+v):\n got %#v\nwant %#v", loc, got, m)
		}
	}
}

func TestPebbleReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenPebble(dir, PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, msgs := populate(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTestPebble(t, dir)
	checkContents(t, s2, want, msgs)
	if !s2.Durable() || NewMemory().Durable() {
		t.Fatal("Durable: want true for Pebble, false for memory")
	}
}

// TestPebbleWaitIsDurable simulates a machine crash with Pebble's
// crash-simulating file system: what a returned Wait covered survives it,
// with and without a clean close.
func TestPebbleWaitIsDurable(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s, err := OpenPebble("db", PebbleOptions{fs: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	want, msgs := populate(t, s)

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	s2, err := OpenPebble("db", PebbleOptions{fs: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	checkContents(t, s2, want, msgs)
}

// TestPebbleNoSyncIsNotDurable is the counter-check of
// TestPebbleWaitIsDurable: without syncing, the same crash loses the batch,
// which shows that the crash simulation would catch a missing sync.
func TestPebbleNoSyncIsNotDurable(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s, err := OpenPebble("db", PebbleOptions{fs: fs, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	putMessage(t, s, Loc{Entity: 1, Seq: 1})
	if _, err := s.Get(Loc{Entity: 1, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	s2, err := OpenPebble("db", PebbleOptions{fs: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	wantNotFound(t, s2, Loc{Entity: 1, Seq: 1})
}

func TestPebbleClosed(t *testing.T) {
	s, err := OpenPebble(t.TempDir(), PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, meta := testMessage(1)
	var b Batch
	b.PutMessage(Loc{Entity: 1, Seq: 1}, meta, m)
	p, err := s.Apply(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("Wait after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	const want = "closed: the store is closed"
	_, err1 := s.Get(Loc{Entity: 1, Seq: 1})
	_, err2 := s.Apply(&b)
	err3 := s.Load(&loaded{})
	for _, err := range []error{err1, err2, err3} {
		if !errors.Is(err, broker.ErrClosed) || err.Error() != want {
			t.Fatalf("after Close: err = %v, want %q", err, want)
		}
	}
}

func TestPebbleCorruptRecords(t *testing.T) {
	s := openTestPebble(t, t.TempDir())
	loc := Loc{Entity: 1, Seq: 1}
	putMessage(t, s, loc)
	bk := makeMessageKey(spaceBody, loc)
	if err := s.db.Set(bk[:], []byte{1, 0xff}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(loc); !errors.Is(err, ErrCorrupt) || err.Error() != "error: corrupt stored message: bad uvarint" {
		t.Fatalf("Get of a corrupt body: %v", err)
	}

	mk := makeMessageKey(spaceMeta, loc)
	if err := s.db.Set(mk[:], []byte{9}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := s.Load(&loaded{}); !errors.Is(err, ErrCorrupt) || err.Error() != "error: corrupt stored meta: unknown codec version 9" {
		t.Fatalf("Load of a corrupt meta: %v", err)
	}
	if err := s.db.Set([]byte("m-short"), []byte{1}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Delete(mk[:], pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := s.Load(&loaded{}); !errors.Is(err, ErrCorrupt) || err.Error() != "error: corrupt store: bad meta key 6d2d73686f7274" {
		t.Fatalf("Load of a bad key: %v", err)
	}
}

func TestPebbleRefusesOtherData(t *testing.T) {
	t.Run("foreign database", func(t *testing.T) {
		dir := t.TempDir()
		db, err := pebble.Open(dir, &pebble.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Set([]byte("key"), []byte("value"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		s, err := OpenPebble(dir, PebbleOptions{})
		if s != nil || broker.CodeOf(err) != broker.CodeInvalid || !strings.HasSuffix(err.Error(), "holds a Pebble database that is not a peeklock store") {
			t.Fatalf("OpenPebble = %v, %v", s, err)
		}
	})
	t.Run("other layout", func(t *testing.T) {
		dir := t.TempDir()
		s := openTestPebble(t, dir)
		if err := s.db.Set(formatKey, []byte{2}, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2, err := OpenPebble(dir, PebbleOptions{})
		if s2 != nil || broker.CodeOf(err) != broker.CodeInvalid || !strings.HasSuffix(err.Error(), "has layout version 02, this build reads version 1") {
			t.Fatalf("OpenPebble = %v, %v", s2, err)
		}
	})
	t.Run("not a directory", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenPebble(file, PebbleOptions{})
		var be *broker.Error
		if s != nil || !errors.As(err, &be) || be.Code != broker.CodeUnknown || be.Err == nil || !strings.HasPrefix(err.Error(), "error: store: open the store in "+file+": ") {
			t.Fatalf("OpenPebble = %v, %v", s, err)
		}
	})
	t.Run("locked by another store", func(t *testing.T) {
		dir := t.TempDir()
		openTestPebble(t, dir)
		s, err := OpenPebble(dir, PebbleOptions{})
		if s != nil || broker.CodeOf(err) != broker.CodeUnknown {
			t.Fatalf("second OpenPebble = %v, %v", s, err)
		}
	})
}

func TestPebbleLogger(t *testing.T) {
	var out bytes.Buffer
	l := pebbleLogger{slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))}
	code := -1
	defer func(f func(int)) { exit = f }(exit)
	exit = func(c int) { code = c }
	l.Infof("flushed %d", 1)
	l.Errorf("bad %s", "disk")
	l.Fatalf("broken %v", true)
	want := `level=DEBUG msg="flushed 1" component=pebble
level=ERROR msg="bad disk" component=pebble
level=ERROR msg="broken true" component=pebble fatal=true
`
	if out.String() != want || code != 1 {
		t.Fatalf("log:\n%s\nexit %d; want\n%s\nexit 1", out.String(), code, want)
	}
}

// TestPebbleLoadsVersion1Entities opens a store whose entity records the
// version 1 encoder wrote (no timestamps, no user metadata): they load with
// those fields zero, and a rewrite stores them as version 2.
func TestPebbleLoadsVersion1Entities(t *testing.T) {
	dir := t.TempDir()
	s := openTestPebble(t, dir)
	k := makeEntityKey(spaceEntity, 7)
	if err := s.db.Set(k[:], version1Entity(t, "full"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestPebble(t, dir)
	want := fullEntityWithoutActions()
	want.Entity.CreatedAt, want.Entity.UpdatedAt, want.Entity.UserMetadata = time.Time{}, time.Time{}, ""
	for i := range want.Entity.Rules {
		want.Entity.Rules[i].CreatedAt = time.Time{}
	}
	got := load(t, s)
	if len(got.Entities) != 1 || !reflect.DeepEqual(got.Entities[0], want) {
		t.Fatalf("Load: %+v\nwant %+v", got.Entities, want)
	}
	now := fullEntity()
	var b Batch
	b.PutEntity(now)
	apply(t, s, &b)
	v, closer, err := s.db.Get(k[:])
	if err != nil {
		t.Fatal(err)
	}
	version := v[0]
	closer.Close()
	if version != entityVersion {
		t.Fatalf("rewritten record has version %d, want %d", version, entityVersion)
	}
	if got := load(t, s); !reflect.DeepEqual(got.Entities, []EntityRecord{now}) {
		t.Fatalf("Load after rewrite: %+v", got.Entities)
	}
}
