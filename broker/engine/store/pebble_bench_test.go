package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

// benchMessage returns a message with a 1 KiB body, as the engine stores it.
func benchMessage(seq int64, body []byte) (*broker.Message, Meta) {
	id := uuid.NewString()
	m := &broker.Message{
		MessageID:      id,
		ContentType:    "application/octet-stream",
		Body:           body,
		SequenceNumber: seq,
		EnqueuedTime:   time.Unix(1700000000, seq).UTC(),
		Size:           int64(len(body) + len(id)),
	}
	return m, Meta{EnqueuedTime: m.EnqueuedTime.UnixNano(), Size: m.Size, MessageID: id}
}

// BenchmarkPebbleApplySync measures synced writes: each iteration puts one
// 1 KiB message (with its sequence) and waits, then deletes it and waits,
// as a send followed by a complete. It reports messages per second for 1, 8
// and 64 concurrent writers.
func BenchmarkPebbleApplySync(b *testing.B) {
	body := make([]byte, 1024)
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, err := OpenPebble(b.TempDir(), PebbleOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var seq atomic.Int64
			one := func() error {
				n := seq.Add(1)
				loc := Loc{Entity: 1, Seq: n}
				m, meta := benchMessage(n, body)
				var batch Batch
				batch.PutMessage(loc, meta, m)
				batch.SetSequence(1, n)
				p, err := s.Apply(&batch)
				if err == nil {
					err = p.Wait()
				}
				if err != nil {
					return err
				}
				batch.Reset()
				batch.DeleteMessage(loc)
				if p, err = s.Apply(&batch); err == nil {
					err = p.Wait()
				}
				return err
			}
			start := time.Now()
			if writers == 1 {
				for b.Loop() {
					if err := one(); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism((writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.ResetTimer()
				start = time.Now()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := one(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

// BenchmarkPebbleApplySyncBatch64 is BenchmarkPebbleApplySync with 64
// messages per batch (as the engine batches a call of 64 sends), 8 writers.
func BenchmarkPebbleApplySyncBatch64(b *testing.B) {
	const perBatch = 64
	body := make([]byte, 1024)
	s, err := OpenPebble(b.TempDir(), PebbleOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var seq atomic.Int64
	b.SetParallelism((8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var put, del Batch
		for pb.Next() {
			put.Reset()
			del.Reset()
			last := seq.Add(perBatch)
			for n := last - perBatch + 1; n <= last; n++ {
				m, meta := benchMessage(n, body)
				put.PutMessage(Loc{Entity: 1, Seq: n}, meta, m)
				del.DeleteMessage(Loc{Entity: 1, Seq: n})
			}
			put.SetSequence(1, last)
			for _, batch := range []*Batch{&put, &del} {
				p, err := s.Apply(batch)
				if err == nil {
					err = p.Wait()
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
	b.ReportMetric(float64(b.N*perBatch)/time.Since(start).Seconds(), "msgs/s")
}

// TestPebbleLoad1M writes 1,000,000 messages of 1 KiB once, closes the store
// and measures reopening plus Load, which must take at most 3 s. It runs only
// with PEEKLOCK_BIG=1 (it writes about 1.1 GB):
//
//	PEEKLOCK_BIG=1 go test -run TestPebbleLoad1M -v -timeout 30m ./broker/engine/store/
func TestPebbleLoad1M(t *testing.T) {
	if os.Getenv("PEEKLOCK_BIG") != "1" {
		t.Skip("set PEEKLOCK_BIG=1 to write and load 1,000,000 messages")
	}
	const total, perBatch = 1_000_000, 1000
	dir := t.TempDir()
	s, err := OpenPebble(dir, PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// Four writers, as concurrent senders would write.
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range 4 {
		wg.Go(func() {
			// Random bodies, so that compression cannot shrink them.
			rng := rand.NewChaCha8([32]byte{byte(w)})
			var b Batch
			for first := int64(w*perBatch + 1); first <= total; first += 4 * perBatch {
				b.Reset()
				for seq := first; seq < first+perBatch; seq++ {
					body := make([]byte, 1024)
					_, _ = rng.Read(body)
					m, meta := benchMessage(seq, body)
					b.PutMessage(Loc{Entity: 1, Seq: seq}, meta, m)
				}
				p, err := s.Apply(&b)
				if err == nil {
					err = p.Wait()
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		t.Fatal(err)
	}
	var b Batch
	b.SetSequence(1, total)
	apply(t, s, &b)
	wrote := time.Since(start)
	start = time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closed := time.Since(start)

	start = time.Now()
	s, err = OpenPebble(dir, PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	opened := time.Since(start)
	var n int
	var last int64
	err = s.Load(loaderFunc(func(loc Loc, meta Meta) error {
		if loc.Seq != last+1 || meta.Size != 1024+36 {
			return fmt.Errorf("message %d after %d with size %d", loc.Seq, last, meta.Size)
		}
		n++
		last = loc.Seq
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	loadTime := time.Since(start)
	t.Logf("write %d messages: %v (%.0f msgs/s); close (flush): %v; open: %v; open+load: %v",
		total, wrote.Round(time.Millisecond), total/wrote.Seconds(), closed.Round(time.Millisecond),
		opened.Round(time.Millisecond), loadTime.Round(time.Millisecond))
	if n != total {
		t.Fatalf("loaded %d messages, want %d", n, total)
	}
	if loadTime > 3*time.Second {
		t.Fatalf("open+load took %v, want at most 3s", loadTime)
	}
}
