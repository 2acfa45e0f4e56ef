package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// fillDeadLettered stores n dead-lettered 1 KiB messages in queue of the
// store in dir (written without syncs: only the setup is fast that way).
func fillDeadLettered(t *testing.T, dir, queue string, n int) {
	t.Helper()
	st, err := store.OpenPebble(dir, store.PebbleOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: queue, Kind: broker.KindQueue, Settings: broker.EntitySettings{LockDuration: 5 * time.Minute}}); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 1024)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	for done := 0; done < n; {
		batch := make([]*broker.Message, 0, 1000)
		for len(batch) < cap(batch) && done+len(batch) < n {
			batch = append(batch, &broker.Message{MessageID: fmt.Sprintf("m-%d", done+len(batch)+1), Body: body,
				ApplicationProperties: map[string]any{"tenant": "acme"}})
		}
		if err := e.Send(ctx, queue, batch); err != nil {
			t.Fatal(err)
		}
		got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: queue, Mode: broker.PeekLock, Max: len(batch)})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			if err := e.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: queue, Token: m.LockToken, Reason: "Poison"}); err != nil {
				t.Fatal(err)
			}
		}
		done += len(got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBenchmarkRunbook measures `peeklock export` of a 100,000-message
// dead-letter queue and `peeklock resubmit` of 10,000, over loopback
// against `peeklock serve --data` (and on the store itself), both run in
// process. Run with PEEKLOCK_BENCH=1; BENCHMARKS.md has the results.
func TestBenchmarkRunbook(t *testing.T) {
	if os.Getenv("PEEKLOCK_BENCH") == "" {
		t.Skip("set PEEKLOCK_BENCH=1 to measure export and resubmit")
	}
	dir := t.TempDir()
	start := time.Now()
	fillDeadLettered(t, dir, "big", 100_000)
	fillDeadLettered(t, dir, "retry", 10_000)
	t.Logf("setup: %s", time.Since(start))

	measure := func(what string, n int, args ...string) {
		t.Helper()
		start := time.Now()
		r := runCLI(t, "", nil, args...)
		d := time.Since(start)
		if r.status != 0 {
			t.Fatalf("%s: status %d\n%s", what, r.status, r.stderr)
		}
		t.Logf("%s: %d messages in %s: %.0f msg/s", what, n, d.Round(time.Millisecond), float64(n)/d.Seconds())
	}
	out := filepath.Join(t.TempDir(), "store.jsonl")
	measure("export on the store (--data)", 100_000, "export", "big", "--dlq", "--data", dir, "--out", out)

	conn, adminAddr, stop := startServe(t, "--data", dir)
	defer stop()
	remote := []string{"--connection", conn, "--admin-url", "http://" + adminAddr}
	out = filepath.Join(t.TempDir(), "serve.jsonl")
	measure("export over loopback (serve)", 100_000, append([]string{"export", "big", "--dlq", "--out", out}, remote...)...)
	if fi, err := os.Stat(out); err != nil || fi.Size() < 100_000*1024 {
		t.Fatalf("export file: %v %v", fi, err)
	}
	measure("resubmit over loopback (serve)", 10_000, append([]string{"resubmit", "retry", "--dlq", "-o", "jsonl"}, remote...)...)
	stop()
	measure("resubmit on the store (--data), 10,000 of big", 10_000, "resubmit", "big", "--dlq", "--max", "10000", "--data", dir, "-o", "jsonl")
}
