package loadtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker/devcert"
)

// setupWait bounds connecting, attaching and emptying the queue.
const setupWait = time.Minute

// drainIdle is how long setup waits for another leftover message of an
// earlier, interrupted run before it decides the queue is empty.
const drainIdle = 500 * time.Millisecond

// phaseWait bounds one send or receive phase of n messages, so that a
// stuck broker fails the run instead of hanging it: a minute, and a
// millisecond per message (10 to 50 times what the brokers measured need).
func phaseWait(n int) time.Duration {
	return time.Minute + time.Duration(n)*time.Millisecond
}

// run is the setting of one throughput benchmark: its configuration, a
// connected client, and the peeklock listener it started, if any.
type run struct {
	cfg config
	c   *client
	srv server
	cpu cpuMeter

	stalls  int           // times the peer stopped delivering (see receiveAll)
	stalled time.Duration // timed work spent waiting on those stalls
}

// cpuMeter adds up the CPU time that this process (the client) and the
// listener's child process use while the benchmark timer runs.
type cpuMeter struct {
	client, server            time.Duration
	clientStart, serverStart  time.Duration
	serverKnown, serverFailed bool
	// counted is what a child-process listener counted in the timed
	// phases (countedStart at the start of the phase), when it tells.
	counted, countedStart counters
}

// counterSource is a server that tells its counters (a child process).
type counterSource interface{ Counters() (counters, error) }

// start marks the start of timed work.
func (m *cpuMeter) start(srv server) {
	m.clientStart = processCPU()
	m.serverKnown = false
	if srv != nil && !m.serverFailed {
		t, separate, err := srv.CPU()
		m.serverStart, m.serverKnown = t, separate && err == nil
		m.serverFailed = err != nil
		if err == nil && separate {
			m.serverFailed = srv.Profile(true) != nil
		}
		if cs, ok := srv.(counterSource); ok && m.serverKnown {
			m.countedStart, _ = cs.Counters()
		}
	}
}

// stop adds the CPU time used since start.
func (m *cpuMeter) stop(srv server) {
	m.client += processCPU() - m.clientStart
	if m.serverKnown {
		t, _, err := srv.CPU()
		if cs, ok := srv.(counterSource); ok && err == nil {
			var n counters
			n, err = cs.Counters()
			m.counted = m.counted.add(n.sub(m.countedStart))
		}
		if err == nil {
			err = srv.Profile(false) // after the reading: writing it out is not the phase's work
		}
		if err != nil {
			m.serverFailed = true
			return
		}
		m.server += t - m.serverStart
	}
}

// timed runs fn with the benchmark timer and the CPU meter on, if b is a
// benchmark.
func (r *run) timed(b *testing.B, fn func()) {
	if b == nil {
		fn()
		return
	}
	b.StartTimer()
	r.cpu.start(r.srv)
	defer func() {
		r.cpu.stop(r.srv)
		b.StopTimer()
	}()
	fn()
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
	ctx, cancel := context.WithTimeout(context.Background(), setupWait)
	defer cancel()
	r := &run{cfg: cfg}
	url := cfg.url
	if url == "" {
		o := listenerOptions{transport: cfg.transport, noHistory: os.Getenv(envHistory) == "0"}
		if cfg.durable {
			o.dataDir = tb.TempDir()
		}
		if cfg.transport == "tls" {
			// The CA is made here, where the client reads it, and used
			// by the listener (in a child process too).
			o.tlsDir = tb.TempDir()
			ca, err := devcert.Open(devcert.Options{Dir: o.tlsDir})
			if err != nil {
				tb.Fatal(err)
			}
			roots := x509.NewCertPool()
			roots.AddCert(ca.CA())
			cfg.tlsConfig = &tls.Config{RootCAs: roots, ServerName: "localhost"}
			r.cfg = cfg
		}
		r.srv = startPeeklock(tb, o, cfg.inProcess)
		if err := r.srv.CreateQueues(cfg.address, 0); err != nil {
			tb.Fatal(err)
		}
		url = r.srv.URL()
	}
	c, err := dialClient(ctx, url, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	r.c = c
	tb.Cleanup(func() { _ = c.close() })
	if cfg.url != "" {
		n, err := c.drain(ctx, drainIdle)
		if err := r.tolerate(tb, err); err != nil {
			tb.Fatal(err)
		}
		if n > 0 {
			tb.Logf("removed %d messages that an earlier run left in %s", n, cfg.address)
		}
	}
	return r
}

// sendAll sends the configured number of messages.
func (r *run) sendAll(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), phaseWait(r.cfg.messages))
	defer cancel()
	if err := r.c.send(ctx, r.cfg.messages); err != nil {
		tb.Fatal(err)
	}
}

// receiveAll attaches the receivers, receives and accepts the configured
// number of messages, and ends the receivers' sessions. With timed (tb is
// then a benchmark), the timer runs only while messages are received.
//
// A peer that stops delivering for stallAfter (see errStalled) gets new
// receivers, and the receive goes on with what is left; the stalled time is
// taken out of the timed work (report), so that a stall counts against
// neither broker, and the stalls are reported.
func (r *run) receiveAll(tb testing.TB, timed bool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), phaseWait(r.cfg.messages))
	defer cancel()
	var b *testing.B
	if timed {
		b, _ = tb.(*testing.B)
	}
	idle := 0 // stalls in a row without a message
	for left := r.cfg.messages; left > 0; {
		rs, err := r.c.receivers(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		var got int
		r.timed(b, func() { got, err = r.c.receive(ctx, rs, left, stallAfter) })
		left -= got
		if errClose := r.tolerate(tb, rs.close()); err == nil {
			err = errClose
		}
		if errors.Is(err, errStalled) {
			if idle++; got > 0 {
				idle = 0
			}
			if idle == maxIdleStalls {
				tb.Fatalf("%v: no message in %d attempts of %v each, %d messages left", err, idle, stallAfter, left)
			}
			r.stalls++
			if b != nil {
				r.stalled += stallAfter
			}
			tb.Logf("the peer stopped delivering with %d messages left; attaching new receivers", left)
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// stallAfter is how long receiveAll waits for a message before it decides
// that the peer has stopped delivering: far longer than any pause of a
// working broker on this machine (the longest seen, during a Pebble
// compaction, was about 300 ms).
const stallAfter = 5 * time.Second

// maxIdleStalls is how many stalls in a row without a single message end
// the run: the messages are gone rather than held up.
const maxIdleStalls = 3

// tolerate returns err, except that it logs and drops errSessionEnd from
// another broker than peeklock: RabbitMQ 3.10 now and then never answers
// the end of a session, and closing the connection ends it all the same.
func (r *run) tolerate(tb testing.TB, err error) error {
	if r.srv == nil && errors.Is(err, errSessionEnd) {
		tb.Logf("%v; the receivers' connections were closed instead", err)
		return nil
	}
	return err
}

// report reports the messages per second of the timed work less the
// stalls, the number of stalls if any, and the CPU time per message of the
// client and of a listener in a child process.
func (r *run) report(b *testing.B) {
	msgs := float64(r.cfg.messages * b.N)
	if s := (b.Elapsed() - r.stalled).Seconds(); s > 0 {
		b.ReportMetric(msgs/s, "msg/s")
	}
	if r.stalls > 0 {
		b.ReportMetric(float64(r.stalls), "stalls")
	}
	if r.cpu.client > 0 {
		b.ReportMetric(float64(r.cpu.client.Microseconds())/msgs, "client-cpu-us/msg")
	}
	if r.cpu.server > 0 && !r.cpu.serverFailed {
		b.ReportMetric(float64(r.cpu.server.Microseconds())/msgs, "server-cpu-us/msg")
		if n := r.cpu.counted; n.faults > 0 {
			b.ReportMetric(float64(n.faults)/msgs, "server-faults/msg")
			b.ReportMetric(float64(n.switches)/msgs, "server-switches/msg")
			b.ReportMetric(float64(n.reads)/msgs, "server-reads/msg")
			b.ReportMetric(float64(n.writes)/msgs, "server-writes/msg")
			b.ReportMetric(float64(n.runs)/msgs, "server-runs/msg")
		}
	}
}

// BenchmarkSend measures sending: one operation is N messages sent by the
// pipelined senders, each waiting for its outcome. The queue is emptied
// after each operation, untimed, so that each starts from an empty queue.
func BenchmarkSend(b *testing.B) {
	r := setup(b)
	b.StopTimer()
	b.ResetTimer()
	for range b.N {
		r.timed(b, func() { r.sendAll(b) })
		r.receiveAll(b, false)
	}
	r.report(b)
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
	r.report(b)
}

// TestThroughputLoop runs the benchmarks' send and receive phases on a
// small scale against a peeklock listener in this process, in memory and
// durable, so that the benchmark code is exercised by every test run: every
// message sent comes back once, and the queue is empty afterwards.
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
			ctx, cancel := context.WithTimeout(context.Background(), setupWait)
			defer cancel()
			n, err := r.c.drain(ctx, 200*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("%d messages were left after receiving the %d sent", n, cfg.messages)
			}
		})
	}
}
