package engine

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// Benchmarks for the engine's latency and scaling targets. BENCHMARKS.md
// records their results with the commands that run them; none of them is a
// timed unit test.

// fillQueue sends n small messages to path in batches of 1000.
func fillQueue(tb testing.TB, e *Engine, path string, n int, body []byte) {
	tb.Helper()
	batch := make([]*broker.Message, 1000)
	for i := 0; i < n; i += len(batch) {
		for j := range batch {
			batch[j] = &broker.Message{Body: body}
		}
		if err := e.Send(context.Background(), path, batch); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkBrowse100 browses a window of 100 messages from a random position
// of a 1,000,000-message queue. Target: at most 1 ms per window.
func BenchmarkBrowse100(b *testing.B) {
	e, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: "big"}); err != nil {
		b.Fatal(err)
	}
	const n = 1_000_000
	fillQueue(b, e, "big", n, make([]byte, 1024))
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for b.Loop() {
		from := 1 + rng.Int64N(n-100)
		ms, err := e.Browse(ctx, broker.BrowseRequest{Entity: "big", FromSequence: from, Max: 100})
		if err != nil || len(ms) != 100 || ms[0].SequenceNumber != from {
			b.Fatalf("window at %d: %d messages, %v", from, len(ms), err)
		}
	}
}

// BenchmarkLockExpiry measures the cost of expiring one lock while n locks
// are outstanding, on a fake clock: the per-lock cost must grow no faster
// than log n (no scans). Each iteration lets all n locks run out (one Tick,
// timed) and then locks the n messages again (not timed), so every
// iteration expires exactly n locks.
func BenchmarkLockExpiry(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run("locks="+itoa(n), func(b *testing.B) {
			clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			e, err := New(Options{Clock: clock})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			ctx := context.Background()
			e.CreateEntity(ctx, broker.Entity{Path: "q", Settings: broker.EntitySettings{
				LockDuration: time.Minute, MaxDeliveryCount: 1 << 30, MaxSizeInMegabytes: 1 << 20}})
			fillQueue(b, e, "q", n, nil)
			lockAll := func() {
				// A millisecond between batches of 100, so that the
				// deadlines differ as they do in real traffic.
				for got := 0; got < n; {
					ms, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 100})
					if err != nil || len(ms) == 0 {
						b.Fatalf("relocking: %d messages, %v", len(ms), err)
					}
					got += len(ms)
					clock.Advance(time.Millisecond)
				}
			}
			lockAll()
			b.ResetTimer()
			for range b.N {
				clock.Advance(time.Minute)
				e.Tick()
				b.StopTimer()
				if ent, _ := e.Entity(ctx, "q"); ent.Counts.Locked != 0 {
					b.Fatalf("%d locks left after expiry", ent.Counts.Locked)
				}
				lockAll()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/lock")
		})
	}
}

// BenchmarkLockExpiryLateness holds 100,000 locks with expiries spread over
// a second on the real clock and reports how late the sweeper expires them,
// from each lock's LockedUntil to its expiry event. Target: p99 <= 10 ms.
// Run with -benchtime 1x.
func BenchmarkLockExpiryLateness(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		e, err := New(Options{EventBuffer: 4 * n})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		e.CreateEntity(ctx, broker.Entity{Path: "q", Settings: broker.EntitySettings{LockDuration: time.Second, MaxDeliveryCount: 100}})
		fillQueue(b, e, "q", n, []byte("x"))
		events, stop := e.Events()
		expected := make(map[broker.LockToken]time.Time, n)
		for i := 0; i < n; i += 500 {
			ms, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 500})
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range ms {
				expected[m.LockToken] = m.LockedUntil
			}
			time.Sleep(5 * time.Millisecond)
		}
		var late []time.Duration
		deadline := time.After(20 * time.Second)
		for len(late) < n {
			select {
			case ev := <-events:
				if until, ok := expected[ev.Token]; ok && ev.Kind == broker.EventLockExpired {
					late = append(late, ev.Time.Sub(until))
				}
			case <-deadline:
				b.Fatalf("only %d of %d locks expired", len(late), n)
			}
		}
		stop()
		e.Close()
		sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
		b.ReportMetric(float64(late[len(late)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(late[len(late)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(late[len(late)-1].Microseconds())/1000, "max-ms")
	}
}

// BenchmarkDurableRestart1M times a restart of a durable engine holding
// 1,000,000 stored 1 KiB messages (open the Pebble store, load, rebuild the
// indexes). Target: at most 3 s. Writing the messages first takes a while;
// run with -benchtime 1x.
func BenchmarkDurableRestart1M(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	st, err := store.OpenPebble(dir, store.PebbleOptions{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: "big", Settings: broker.EntitySettings{MaxSizeInMegabytes: 80 * 1024}}); err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { fillQueue(b, e, "big", n/8, body) })
	}
	wg.Wait()
	e.Close()
	b.ResetTimer()
	for b.Loop() {
		st, err := store.OpenPebble(dir, store.PebbleOptions{})
		if err != nil {
			b.Fatal(err)
		}
		e, err := New(Options{Store: st})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		ent, _ := e.Entity(ctx, "big")
		if ent.Counts.Active != n {
			b.Fatalf("recovered %d of %d messages", ent.Counts.Active, n)
		}
		e.Close()
		b.StartTimer()
	}
}
