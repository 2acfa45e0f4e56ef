package store

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/peeklock/peeklock/broker"
)

// TestPebbleBodiesInBlobFiles checks the store's value separation (see
// bodiesApart): a flush puts large messages into blob files and keeps small
// ones in the sstables, both read back whole after a reopen, and once every
// message is deleted and the levels compacted no blob file is left.
func TestPebbleBodiesInBlobFiles(t *testing.T) {
	dir := t.TempDir()
	opts := PebbleOptions{NoSync: true}
	s, _ := openMisuseCounting(t, dir, opts)
	rng := rand.New(rand.NewPCG(3, 4))
	var locs []Loc
	want := map[Loc][]byte{}
	for i := range 300 {
		loc := Loc{Entity: 1, Seq: int64(i + 1)}
		m, meta := testMessage(loc.Seq)
		size := 1024
		if i%2 == 0 {
			size = 16 // under blobMinimumSize with its record
		}
		m.Body = randomBody(rng, size)
		var b Batch
		b.PutMessage(loc, meta, m)
		apply(t, s, &b)
		locs, want[loc] = append(locs, loc), m.Body
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	blobs := s.db.Metrics().BlobFiles
	// A large message's record is its body and a few dozen bytes more.
	if blobs.LiveCount == 0 || blobs.ReferencedValueSize < 150*1024 {
		t.Fatalf("after a flush: %d blob files holding %d bytes; want the 150 large messages in blob files",
			blobs.LiveCount, blobs.ReferencedValueSize)
	}
	if blobs.ReferencedValueSize > 150*(1024+64) {
		t.Fatalf("after a flush: %d bytes in blob files; the 150 small messages belong in the sstables", blobs.ReferencedValueSize)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, misuses := openMisuseCounting(t, dir, opts)
	load(t, s)
	wantBodies(t, s, want)
	var b Batch
	for _, loc := range locs {
		b.DeleteMessage(loc)
	}
	apply(t, s, &b)
	compactAll(t, s)
	if blobs := s.db.Metrics().BlobFiles; blobs.LiveCount != 0 {
		t.Fatalf("every message deleted and compacted: %d blob files (%d bytes) still live", blobs.LiveCount, blobs.LiveSize)
	}
	if n := misuses.Load(); n != 0 {
		t.Fatalf("%d single deletes met a second Set", n)
	}
	for _, loc := range locs {
		wantNotFound(t, s, loc)
	}
}

// TestPebbleRewritesPinnedBlobFiles checks that a few long-lived messages do
// not keep the blob files of a drained backlog (see bodiesApart): once the
// blob files are old enough, Pebble's compactions rewrite them until at
// most half of what they hold is garbage, and the messages kept read back
// whole, before and after a reopen.
func TestPebbleRewritesPinnedBlobFiles(t *testing.T) {
	dir := t.TempDir()
	opts := PebbleOptions{NoSync: true, MemTableSize: 256 << 10, BodyCacheSize: -1, blobRewriteAge: time.Nanosecond}
	s, misuses := openMisuseCounting(t, dir, opts)
	const n, keepEvery = 2000, 40
	body := bytes.Repeat([]byte("peeklock"), 128)
	var gone []Loc
	kept := map[Loc][]byte{}
	for i := 0; i < n; i += 50 {
		var b Batch
		for j := i; j < i+50; j++ {
			loc := Loc{Entity: 1, Seq: int64(j + 1)}
			m, meta := testMessage(loc.Seq)
			m.Body = body
			b.PutMessage(loc, meta, m)
			if j%keepEvery == 0 {
				kept[loc] = body
			} else {
				gone = append(gone, loc)
			}
		}
		apply(t, s, &b)
	}
	var b Batch
	for _, loc := range gone {
		b.DeleteMessage(loc)
	}
	apply(t, s, &b)
	compactAll(t, s)
	blobs := s.db.Metrics().BlobFiles
	t.Logf("drained: %d blob files, %d bytes of values, %d referenced", blobs.LiveCount, blobs.ValueSize, blobs.ReferencedValueSize)
	if blobs.ValueSize < 10*blobs.ReferencedValueSize {
		t.Fatalf("drained: %d bytes of values in blob files, %d referenced; want the kept messages to pin most of the backlog's files", blobs.ValueSize, blobs.ReferencedValueSize)
	}
	// Pebble picks a rewrite when it schedules compactions: after a flush.
	deadline := time.Now().Add(30 * time.Second)
	for seq := int64(n + 1); ; seq++ {
		blobs = s.db.Metrics().BlobFiles
		if blobs.ValueSize <= 2*blobs.ReferencedValueSize {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %d bytes of values in blob files, %d referenced; want at most twice", blobs.ValueSize, blobs.ReferencedValueSize)
		}
		putMessage(t, s, Loc{Entity: 2, Seq: seq})
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("rewritten: %d blob files, %d bytes of values, %d referenced", blobs.LiveCount, blobs.ValueSize, blobs.ReferencedValueSize)
	wantBodies(t, s, kept)
	if misused := misuses.Load(); misused != 0 {
		t.Fatalf("%d single deletes met a second Set", misused)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = openMisuseCounting(t, dir, opts)
	load(t, s)
	wantBodies(t, s, kept)
}

// TestPebbleBlobFilesSurviveACrash is TestPebbleWaitIsDurable with large
// messages and memtables small enough that flushes write blob files among
// the batches: after a simulated machine crash, every message a returned
// Wait covered reads back whole, and every delete stays done.
func TestPebbleBlobFilesSurviveACrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := PebbleOptions{fs: fs, MemTableSize: 256 << 10, BodyCacheSize: -1}
	s, err := OpenPebble("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	rng := rand.New(rand.NewPCG(5, 6))
	want := map[Loc][]byte{}
	var deleted []Loc
	for i := 0; i < 1000; i += 25 {
		var b Batch
		for j := i; j < i+25; j++ {
			loc := Loc{Entity: 1, Seq: int64(j + 1)}
			m, meta := testMessage(loc.Seq)
			m.Body = randomBody(rng, 1024)
			b.PutMessage(loc, meta, m)
			want[loc] = m.Body
		}
		for loc := range want {
			if loc.Seq%3 == 0 && loc.Seq <= int64(i) {
				b.DeleteMessage(loc)
				delete(want, loc)
				deleted = append(deleted, loc)
			}
		}
		apply(t, s, &b)
	}
	if n := s.db.Metrics().BlobFiles.LiveCount; n == 0 {
		t.Fatal("no blob file before the crash: the test does not reach what it tests")
	}

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	s2, err := OpenPebble("db", PebbleOptions{fs: crashed, BodyCacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	load(t, s2)
	wantBodies(t, s2, want)
	for _, loc := range deleted {
		wantNotFound(t, s2, loc)
	}
}

// randomBody returns n random bytes: a body Pebble cannot compress.
func randomBody(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// wantBodies checks that s reads back each message of want with its body.
func wantBodies(t *testing.T, s *Pebble, want map[Loc][]byte) {
	t.Helper()
	locs := slices.Collect(maps.Keys(want))
	got := make([]*broker.Message, len(locs))
	if err := s.Bodies(locs, got); err != nil {
		t.Fatal(err)
	}
	for i, loc := range locs {
		if got[i] == nil || !bytes.Equal(got[i].Body, want[loc]) {
			t.Fatalf("message %d: body lost or changed", loc.Seq)
		}
	}
}
