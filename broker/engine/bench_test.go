package engine

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
	"github.com/peeklock/peeklock/internal/proccpu"
)

// benchLoop runs send + peek-lock receive + complete of 1 KiB messages in
// batches of 64 on `workers` goroutines, each doing its share of the work,
// all on one queue (many clients of one queue: its mutex serialises them,
// and a worker receives whatever is first in the queue, its own messages or
// another's), and reports messages per second and the process's CPU per
// message. It sends and receives as the AMQP listener does: each message is
// new and handed over (SendOwned), so the engine keeps it instead of a
// copy, and it is received as deliveries of the stored messages
// (ReceiveDeliveries into a slice reused), not as copies.
func benchLoop(b *testing.B, st store.Store, workers int) {
	benchLoopWith(b, st, workers, broker.EntitySettings{})
}

// benchLoopWith is benchLoop on a queue with settings s; with duplicate
// detection on, every message has its own MessageId.
func benchLoopWith(b *testing.B, st store.Store, workers int, s broker.EntitySettings) {
	benchLoopOpts(b, Options{Store: st}, workers, s)
}

// benchLoopOpts is benchLoopWith on an engine opened with opts.
func benchLoopOpts(b *testing.B, opts Options, workers int, s broker.EntitySettings) {
	benchLoopQueues(b, opts, workers, 1, s)
}

// benchLoopQueues is benchLoopOpts with the workers spread over `queues`
// queues (worker i on queue i%queues), so that, with a queue per worker,
// no two workers share an entity mutex.
func benchLoopQueues(b *testing.B, opts Options, workers, queues int, s broker.EntitySettings) {
	e, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	paths := make([]string, queues)
	for i := range paths {
		paths[i] = "bench"
		if i > 0 {
			paths[i] += itoa(i)
		}
		if err := e.CreateEntity(ctx, broker.Entity{Path: paths[i], Settings: s}); err != nil {
			b.Fatal(err)
		}
	}
	var ids atomic.Int64
	body := make([]byte, 1024)
	const batch = 64
	b.ResetTimer()
	start := time.Now()
	cpu0, _ := proccpu.Used()
	var wg sync.WaitGroup
	per := (b.N + workers - 1) / workers
	for w := range workers {
		path := paths[w%queues]
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := make([]*broker.Message, batch)
			ss := make([]broker.Settlement, 0, batch)
			ds := make([]broker.Delivery, 0, batch)
			for done := 0; done < per; done += batch {
				for i := range msgs {
					msgs[i] = &broker.Message{Body: body}
					if s.RequiresDuplicateDetection {
						msgs[i].MessageID = strconv.FormatInt(ids.Add(1), 10)
					}
				}
				if err := e.SendOwned(ctx, path, msgs); err != nil {
					b.Error(err)
					return
				}
				got := 0
				for got < batch {
					clear(ds)
					var err error
					ds, err = e.ReceiveDeliveries(ctx, 0, broker.ReceiveRequest{Entity: path, Max: batch - got}, ds[:0])
					if err != nil {
						b.Error(err)
						return
					}
					ss = ss[:0]
					for i := range ds {
						ss = append(ss, broker.Settlement{Kind: broker.Complete, Entity: path, Token: ds[i].LockToken})
					}
					if errs := e.SettleMany(ctx, ss); errs != nil {
						b.Error(errs)
						return
					}
					got += len(ds)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.ReportMetric(float64(per*workers)/el.Seconds(), "msg/s")
	// The process's CPU time per message (all goroutines, the GC and the
	// store's included) tells costs apart on a busy machine, where the
	// wall-clock rate varies with the other load.
	cpu1, _ := proccpu.Used()
	b.ReportMetric(float64(cpu1-cpu0)/float64(per*workers), "cpu-ns/msg")
}

func BenchmarkMemoryLoop(b *testing.B) {
	for _, w := range []int{1, 2, 8} {
		b.Run("workers="+itoa(w), func(b *testing.B) { benchLoop(b, store.NewMemory(), w) })
	}
	// The 8 workers on a queue each: what the one queue's mutex costs the
	// 8-worker case (little: see BENCHMARKS.md, session 29).
	b.Run("workers=8,queues=8", func(b *testing.B) {
		benchLoopQueues(b, Options{Store: store.NewMemory()}, 8, 8, broker.EntitySettings{})
	})
	// One worker with the machine's other core kept busy by another
	// process (startSpinner): on two cores, what one worker costs when,
	// as with eight, the runtime has no idle core to collect on.
	b.Run("workers=1,other-core=busy", func(b *testing.B) {
		defer startSpinner(b)()
		benchLoop(b, store.NewMemory(), 1)
	})
}

// BenchmarkHistoryLoop is the memory and durable loops with the message
// histories on and off, in one run, so that the cost of the history can be
// compared (benchstat with -col /history).
func BenchmarkHistoryLoop(b *testing.B) {
	for _, c := range []struct {
		store   string
		workers int
	}{{"memory", 1}, {"memory", 8}, {"pebble", 16}, {"pebble", 64}} {
		for _, on := range []bool{false, true} {
			name := "store=" + c.store + "/workers=" + itoa(c.workers) + "/history=" + strconv.FormatBool(on)
			b.Run(name, func(b *testing.B) {
				var st store.Store = store.NewMemory()
				if c.store == "pebble" {
					p, err := store.OpenPebble(b.TempDir(), store.PebbleOptions{})
					if err != nil {
						b.Fatal(err)
					}
					st = p
				}
				benchLoopOpts(b, Options{Store: st, NoHistory: !on}, c.workers, broker.EntitySettings{})
			})
		}
	}
}

func BenchmarkPebbleLoop(b *testing.B) {
	for _, w := range []int{1, 16, 64} {
		b.Run("workers="+itoa(w), func(b *testing.B) {
			st, err := store.OpenPebble(b.TempDir(), store.PebbleOptions{})
			if err != nil {
				b.Fatal(err)
			}
			benchLoop(b, st, w)
		})
	}
}

// BenchmarkPebbleLoopDuplicateDetection is BenchmarkPebbleLoop with
// duplicate detection on: every send also stores one history record per
// message, and, with a one-second window, deletes the expired ones.
func BenchmarkPebbleLoopDuplicateDetection(b *testing.B) {
	for _, w := range []int{1, 16, 64} {
		b.Run("workers="+itoa(w), func(b *testing.B) {
			st, err := store.OpenPebble(b.TempDir(), store.PebbleOptions{})
			if err != nil {
				b.Fatal(err)
			}
			benchLoopWith(b, st, w, broker.EntitySettings{RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: time.Second})
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestMemoryPerMessage measures the engine's heap per stored message (the
// store's own copy excluded: a store that keeps nothing is used).
func TestMemoryPerMessage(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("stores many messages")
	}
	n := 200_000
	if os.Getenv("PEEKLOCK_BIG") != "" {
		n = 1_000_000
	}
	e, err := New(Options{Store: nullStore{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	e.CreateEntity(ctx, broker.Entity{Path: "q", Settings: broker.EntitySettings{DefaultMessageTimeToLive: time.Hour}})
	msgs := make([]*broker.Message, 1000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i += len(msgs) {
		for j := range msgs {
			// A 36-character message id, as SDKs generate them.
			msgs[j] = &broker.Message{MessageID: "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f" + itoa(1000+(i+j)%9000)}
		}
		if err := e.Send(ctx, "q", msgs); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
	t.Logf("engine memory per stored message: %.0f bytes (%d messages)", per, n)
	if per > 256 {
		t.Fatalf("%.0f bytes per message, budget 256", per)
	}
	runtime.KeepAlive(e)
}

// nullStore keeps nothing: it isolates the engine's own memory.
type nullStore struct{}

func (nullStore) Load(store.Loader) error { return nil }
func (nullStore) Get(store.Loc) (*broker.Message, error) {
	return nil, broker.ErrMessageNotFound
}
func (nullStore) Apply(*store.Batch) (store.Pending, error)         { return store.Done{}, nil }
func (nullStore) Bodies(_ []store.Loc, out []*broker.Message) error { clear(out); return nil }
func (nullStore) Durable() bool                                     { return false }
func (nullStore) History(store.HistoryKey) (uint16, []store.HistoryEvent, error) {
	return 0, nil, nil
}
func (nullStore) Close() error { return nil }

// TestHistoryMemoryPerMessage measures the engine's heap per stored message
// with the message histories on, for messages delivered once (each has a
// send and a hand-out in its history), and checks that completing them
// leaves nothing of their histories: the engine keeps only an event count per message (the store
// keeps the events: on disk with Pebble), so the budget of
// TestMemoryPerMessage holds. It also reports what the memory store
// spends on the histories of those messages (history on against off).
func TestHistoryMemoryPerMessage(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("stores many messages")
	}
	const n = 100_000
	per := func(st store.Store, history, complete bool) float64 {
		e, err := New(Options{Store: st, NoHistory: !history})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		ctx := context.Background()
		e.CreateEntity(ctx, broker.Entity{Path: "q", Settings: broker.EntitySettings{LockDuration: time.Hour}})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		msgs := make([]*broker.Message, 1000)
		var locked []*broker.Message
		for i := 0; i < n; i += len(msgs) {
			for j := range msgs {
				msgs[j] = &broker.Message{MessageID: "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f" + itoa(1000+(i+j)%9000)}
			}
			if err := e.Send(ctx, "q", msgs); err != nil {
				t.Fatal(err)
			}
			got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: len(msgs)})
			if err != nil || len(got) != len(msgs) && st != (nullStore{}) {
				t.Fatalf("receive: %d, %v", len(got), err)
			}
			locked = append(locked, got...)
		}
		if complete {
			ss := make([]broker.Settlement, len(locked))
			for i, m := range locked {
				ss[i] = broker.Settlement{Kind: broker.Complete, Entity: "q", Token: m.LockToken}
			}
			if errs := e.SettleMany(ctx, ss); errs != nil {
				t.Fatal(errs[0])
			}
		}
		locked = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(e)
		return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
	}
	engineOwn := per(nullStore{}, true, false)
	t.Logf("engine memory per stored message delivered once, history on: %.0f bytes", engineOwn)
	if engineOwn > 256 {
		t.Errorf("%.0f bytes per message, budget 256", engineOwn)
	}
	// Completed, the messages leave no history behind: what is left is the
	// buckets of the memory store's maps, which Go does not shrink (about
	// 40 bytes per message of its history map).
	if on, off := per(store.NewMemory(), true, true), per(store.NewMemory(), false, true); on-off > 64 {
		t.Errorf("%.0f bytes per message left after completing them all with history, %.0f without", on, off)
	}
	on, off := per(store.NewMemory(), true, false), per(store.NewMemory(), false, false)
	t.Logf("memory store: %.0f bytes per message delivered once with history, %.0f without: %.0f for the history", on, off, on-off)
}
