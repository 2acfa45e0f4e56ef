package loadtest

import (
	"context"
	"testing"
	"time"
)

// phaseWait bounds one benchmark's work (setup, its phases and the
// untimed ones) so that a stuck broker fails the run instead of hanging it.
const phaseWait = 20 * time.Minute

// drainIdle is how long setup waits for another leftover message of an
// earlier, interrupted run before it decides the queue is empty.
const drainIdle = 500 * time.Millisecond

// run is the setting of one throughput benchmark: its configuration, a
// connected client and a context that bounds it.
type run struct {
	cfg config
	c   *client
	ctx context.Context
}

// setup reads the configuration, starts peeklock unless the environment
// names a broker, connects and empties the queue.
func setup(tb testing.TB) *run {
	tb.Helper()
	cfg, err := configFromEnv()
	if err != nil {
		tb.Fatal(err)
	}
	return setupWith(tb, cfg)
}

// setupWith is setup with a given configuration.
func setupWith(tb testing.TB, cfg config) *run {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), phaseWait)
	tb.Cleanup(cancel)
	url := cfg.url
	if url == "" {
		o := listenerOptions{}
		if cfg.durable {
			o.dataDir = tb.TempDir()
		}
		srv := startPeeklock(tb, o, cfg.inProcess)
		if err := srv.CreateQueues(cfg.address, 0); err != nil {
			tb.Fatal(err)
		}
		url = srv.URL()
	}
	c, err := dialClient(ctx, url, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.close() })
	if cfg.url != "" {
		n, err := c.drain(ctx, drainIdle)
		if err != nil {
			tb.Fatal(err)
		}
		if n > 0 {
			tb.Logf("removed %d messages that an earlier run left in %s", n, cfg.address)
		}
	}
	return &run{cfg: cfg, c: c, ctx: ctx}
}

// sendAll sends the configured number of messages.
func (r *run) sendAll(tb testing.TB) {
	tb.Helper()
	if err := r.c.send(r.ctx, r.cfg.messages); err != nil {
		tb.Fatal(err)
	}
}

// receiveAll attaches the receivers, receives and accepts the configured
// number of messages, and detaches. With timed (tb is then a benchmark), the
// timer runs only while messages are received.
func (r *run) receiveAll(tb testing.TB, timed bool) {
	tb.Helper()
	rs, err := r.c.receivers(r.ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer closeReceivers(rs)
	if b, ok := tb.(*testing.B); ok && timed {
		b.StartTimer()
		defer b.StopTimer()
	}
	if err := r.c.receive(r.ctx, rs, r.cfg.messages); err != nil {
		tb.Fatal(err)
	}
}

// reportRate reports the messages per second of the timed work.
func reportRate(b *testing.B, messages int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(messages*b.N)/s, "msg/s")
	}
}

// BenchmarkSend measures sending: one operation is N messages sent by the
// pipelined senders, each waiting for its outcome. The queue is emptied
// after each operation, untimed, so that each starts from an empty queue.
func BenchmarkSend(b *testing.B) {
	r := setup(b)
	b.ResetTimer()
	for range b.N {
		r.sendAll(b)
		b.StopTimer()
		r.receiveAll(b, false)
		b.StartTimer()
	}
	b.StopTimer()
	reportRate(b, r.cfg.messages)
}

// BenchmarkReceive measures receiving: one operation is N messages
// received and accepted. The queue is filled before each operation,
// untimed.
func BenchmarkReceive(b *testing.B) {
	r := setup(b)
	b.StopTimer()
	b.ResetTimer()
	for range b.N {
		r.sendAll(b)
		r.receiveAll(b, true)
	}
	reportRate(b, r.cfg.messages)
}

// TestThroughputLoop runs the benchmarks' send and receive phases on a
// small scale against a peeklock listener in this process, in memory and
// durable, so that the benchmark code is exercised by every test run.
func TestThroughputLoop(t *testing.T) {
	for _, durable := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "durable"}[durable]
		t.Run(name, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.durable = durable
			cfg.messages = 2000
			cfg.inProcess = true
			r := setupWith(t, cfg)
			r.sendAll(t)
			r.receiveAll(t, false)
			n, err := r.c.drain(r.ctx, 200*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("%d messages were left after receiving the %d sent", n, cfg.messages)
			}
		})
	}
}
