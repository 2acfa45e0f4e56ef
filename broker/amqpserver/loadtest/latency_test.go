package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker/amqpserver"
)

// Environment of the many-connections latency run (TestLatencyManyConnections).
const (
	// envLatency chooses its size: unset, a small run for every go test;
	// "big", 1,000 connections for a minute; "soak", 1,000 connections for
	// ten minutes with the listener's resident memory every 30 s.
	envLatency = "PEEKLOCK_LOADTEST_LATENCY"
	// envLatencyConns, envLatencyInterval and envLatencyDuration override
	// the connections, the interval between the sends of each, and how
	// long they send.
	envLatencyConns    = "PEEKLOCK_LOADTEST_LATENCY_CONNS"
	envLatencyInterval = "PEEKLOCK_LOADTEST_LATENCY_INTERVAL"
	envLatencyDuration = "PEEKLOCK_LOADTEST_LATENCY_DURATION"
	// envLatencyQueues sets how many queues the connections share, spread
	// round-robin (default: one queue per connection); with fewer queues
	// than connections the receivers of a queue compete for its messages.
	envLatencyQueues = "PEEKLOCK_LOADTEST_LATENCY_QUEUES"
	// envLatencyBatch sets the most messages each receive asks for.
	envLatencyBatch = "PEEKLOCK_LOADTEST_LATENCY_BATCH"
	// envLatencyTogether set to 1 starts every sender at once and has each
	// wait the interval after its send returns, as a client process that
	// opens all its connections and then runs a send-and-sleep loop on each
	// does: the sends keep arriving in bunches of about conns. Unset, the
	// senders start at random moments of the interval and send on a fixed
	// tick, as independent clients do.
	envLatencyTogether = "PEEKLOCK_LOADTEST_LATENCY_TOGETHER"
)

// latencyConfig is a many-connections latency run: conns SDK clients (one
// connection each, authorized by a token put on $cbs, as the SDK does),
// each with a sender and a peek-lock receiver on one of queues queues
// (connection i on queue i mod queues); each sends a message of size bytes
// every interval for duration and receives in batches of up to batch,
// completing each message.
type latencyConfig struct {
	conns    int
	queues   int
	interval time.Duration
	duration time.Duration
	size     int
	batch    int
	durable  bool
	together bool          // the senders start at once and sleep between sends (envLatencyTogether)
	sample   time.Duration // how often the listener's memory is read
	maxP99   time.Duration // the run fails above this send latency p99 (0: no bound)
}

// latencyConfigFromEnv returns the run the environment asks for.
func latencyConfigFromEnv() (latencyConfig, error) {
	c := latencyConfig{conns: 50, interval: 200 * time.Millisecond, duration: 4 * time.Second, size: 512, batch: 10,
		sample: time.Second, maxP99: 5 * time.Second}
	switch v := os.Getenv(envLatency); v {
	case "":
	case "big":
		c.conns, c.interval, c.duration, c.sample, c.maxP99 = 1000, 2*time.Second, time.Minute, 10*time.Second, 0
	case "soak":
		c.conns, c.interval, c.duration, c.sample, c.maxP99 = 1000, 2*time.Second, 10*time.Minute, 30*time.Second, 0
	default:
		return c, fmt.Errorf("%s=%q: want big or soak", envLatency, v)
	}
	var err error
	if c.durable, err = envFlag(envDurable); err != nil {
		return c, err
	}
	if c.together, err = envFlag(envLatencyTogether); err != nil {
		return c, err
	}
	if c.conns, err = envInt(envLatencyConns, c.conns, 20_000); err != nil {
		return c, err
	}
	if c.queues, err = envInt(envLatencyQueues, c.conns, c.conns); err != nil {
		return c, err
	}
	if c.batch, err = envInt(envLatencyBatch, c.batch, 5000); err != nil {
		return c, err
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{envLatencyInterval, &c.interval}, {envLatencyDuration, &c.duration}} {
		if v := os.Getenv(d.name); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x <= 0 {
				return c, fmt.Errorf("%s=%q: want a positive duration", d.name, v)
			}
			*d.dst = x
		}
	}
	return c, nil
}

// latencyReport is what a many-connections run measured.
type latencyReport struct {
	sends, received, completed int64
	latencies                  []time.Duration // of every send, sorted
	windows                    []latencyWindow // the sends by when they started, in windows of the RSS samples' period
	rss                        []rssSample
	serverCPU, clientCPU       time.Duration
	elapsed                    time.Duration
}

// latencyWindow is the send latencies of the sends that started in one
// window of the run: whether a tail comes from every burst or a few.
type latencyWindow struct {
	p99, max time.Duration
}

// timedSend is a send's latency and when it started, from the run's start.
type timedSend struct {
	at, d time.Duration
}

// windowsOf groups sends by when they started, in windows of width w, and
// returns each window's p99 and max (zero for a window without a send).
func windowsOf(sends []timedSend, w time.Duration) []latencyWindow {
	var byWindow [][]time.Duration
	for _, s := range sends {
		i := int(s.at / w)
		for len(byWindow) <= i {
			byWindow = append(byWindow, nil)
		}
		byWindow[i] = append(byWindow[i], s.d)
	}
	out := make([]latencyWindow, len(byWindow))
	for i, ds := range byWindow {
		slices.Sort(ds)
		out[i] = latencyWindow{p99: quantileOf(ds, 0.99), max: quantileOf(ds, 1)}
	}
	return out
}

// TestWindowsOf: sends fall in the window of when they started, whatever
// their latency, and a window without a send is zero.
func TestWindowsOf(t *testing.T) {
	ms := time.Millisecond
	got := windowsOf([]timedSend{
		{at: 500 * ms, d: 900 * ms},
		{at: 2100 * ms, d: 20 * ms},
		{at: 2900 * ms, d: 30 * ms},
		{at: 2000 * ms, d: 10 * ms},
	}, time.Second)
	want := []latencyWindow{{p99: 900 * ms, max: 900 * ms}, {}, {p99: 30 * ms, max: 30 * ms}}
	if !slices.Equal(got, want) {
		t.Fatalf("windows %v, want %v", got, want)
	}
}

// rssSample is the listener's resident memory at a moment of the run.
type rssSample struct {
	at        time.Duration
	rss       uint64
	gcs       uint64
	clientGCs uint64 // the collections of this process, the clients'
}

// quantile returns the q-quantile of the send latencies.
func (r latencyReport) quantile(q float64) time.Duration {
	return quantileOf(r.latencies, q)
}

// quantileOf returns the q-quantile of sorted latencies (0 for none).
func quantileOf(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)]
}

// log writes the report.
func (r latencyReport) log(tb testing.TB, cfg latencyConfig) {
	tb.Logf("%d connections on %d queues, one %d-byte send each every %v, receives of up to %d, for %v (durable %v): %d sends (%.0f/s), %d received, %d completed",
		cfg.conns, cfg.queues, cfg.size, cfg.interval, cfg.batch, cfg.duration, cfg.durable, r.sends, float64(r.sends)/r.elapsed.Seconds(), r.received, r.completed)
	tb.Logf("send latency: p50 %v, p90 %v, p99 %v, p99.9 %v, max %v",
		r.quantile(0.50).Round(10*time.Microsecond), r.quantile(0.90).Round(10*time.Microsecond),
		r.quantile(0.99).Round(10*time.Microsecond), r.quantile(0.999).Round(10*time.Microsecond),
		r.quantile(1).Round(10*time.Microsecond))
	if r.serverCPU > 0 {
		tb.Logf("CPU: listener %v (%.0f%% of a core), clients %v (%.0f%%)", r.serverCPU.Round(time.Millisecond), 100*r.serverCPU.Seconds()/r.elapsed.Seconds(),
			r.clientCPU.Round(time.Millisecond), 100*r.clientCPU.Seconds()/r.elapsed.Seconds())
	}
	var ws []string
	for i, w := range r.windows {
		ws = append(ws, fmt.Sprintf("%v %v/%v", time.Duration(i)*cfg.sample, w.p99.Round(time.Millisecond), w.max.Round(time.Millisecond)))
	}
	tb.Logf("send latency p99/max by when the send started: %s", strings.Join(ws, ", "))
	var curve []string
	for _, s := range r.rss {
		curve = append(curve, fmt.Sprintf("%v %.0f MiB (%d GCs; clients %d)", s.at.Round(time.Second), float64(s.rss)/(1<<20), s.gcs, s.clientGCs))
	}
	tb.Logf("listener RSS: %s", strings.Join(curve, ", "))
}

// TestLatencyManyConnections runs many SDK clients that each send a small
// message every interval and receive in batches, as outside tests of
// peeklock serve did (1,000 connections, 512 bytes every 2 s, on 1,000 or
// on 100 queues), and reports the send latency and the listener's memory.
// Small in every go test; PEEKLOCK_LOADTEST_LATENCY=big or =soak for the
// real thing, and the variables above for the queues the connections
// share and senders that start together. PEEKLOCK_LOADTEST_SERVER_CPUPROFILE
// profiles the listener while the clients send;
// PEEKLOCK_LOADTEST_SERVER_HEAPPROFILE=F writes its heap profiles F.open
// (the connections open, before the first send) and F.sending (at the
// third memory sample).
func TestLatencyManyConnections(t *testing.T) {
	cfg, err := latencyConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	rep := runLatency(t, cfg)
	rep.log(t, cfg)
	if cfg.maxP99 > 0 && rep.quantile(0.99) > cfg.maxP99 {
		t.Errorf("send latency p99 %v, more than %v", rep.quantile(0.99), cfg.maxP99)
	}
}

// runLatency runs cfg against a listener in a child process.
func runLatency(tb testing.TB, cfg latencyConfig) latencyReport {
	tb.Helper()
	o := listenerOptions{maxConnections: 2 * cfg.conns}
	if cfg.durable {
		o.dataDir = tb.TempDir()
	}
	srv := startPeeklock(tb, o, false)
	if err := srv.CreateQueues("lat", cfg.queues); err != nil {
		tb.Fatal(err)
	}
	host := srv.URL()[strings.LastIndexByte(srv.URL(), '@')+1:]
	connStr := fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true",
		host, amqpserver.DefaultKeyName, amqpserver.DefaultKey)

	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration+5*time.Minute)
	defer cancel()
	peers := make([]*latencyPeer, cfg.conns)
	tb.Cleanup(func() {
		for _, p := range peers {
			if p != nil {
				_ = p.client.Close(context.Background())
			}
		}
	})
	errs := forEach(cfg.conns, dialParallel, func(i int) error {
		p, err := openLatencyPeer(ctx, connStr, queueName("lat", i%cfg.queues))
		peers[i] = p
		return err
	})
	failOn(tb, "opening the clients", errs)

	var (
		mu        sync.Mutex
		timed     = make([]timedSend, 0, int(float64(cfg.conns)*cfg.duration.Seconds()/cfg.interval.Seconds())+cfg.conns)
		sends     atomic.Int64
		received  atomic.Int64
		completed atomic.Int64
		errMu     sync.Mutex
		runErrs   []error
	)
	fail := func(i int, err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if len(runErrs) < 100 {
			runErrs = append(runErrs, fmt.Errorf("client %d: %w", i, err))
		}
	}
	body := benchBody(cfg.size)
	heapProfile(tb, srv, "open")
	cpu0, _, _ := srv.CPU()
	clientCPU0 := processCPU()
	if err := srv.Profile(true); err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	sendCtx, stopSending := context.WithTimeout(ctx, cfg.duration)
	defer stopSending()
	recvCtx, stopReceiving := context.WithCancel(ctx)
	defer stopReceiving()
	var senders, receivers sync.WaitGroup
	for i, p := range peers {
		senders.Go(func() {
			// Spread the clients over the interval, as independent ones
			// are, unless they start together.
			var spread time.Duration
			if !cfg.together {
				spread = rand.N(cfg.interval)
			}
			select {
			case <-time.After(spread):
			case <-sendCtx.Done():
				return
			}
			tick := time.NewTicker(cfg.interval)
			defer tick.Stop()
			for {
				t0 := time.Now()
				err := p.sender.SendMessage(ctx, &azservicebus.Message{Body: body}, nil)
				d := time.Since(t0)
				if err != nil {
					fail(i, fmt.Errorf("send: %w", err))
					return
				}
				sends.Add(1)
				mu.Lock()
				timed = append(timed, timedSend{at: t0.Sub(start), d: d})
				mu.Unlock()
				next := tick.C
				if cfg.together {
					next = time.After(cfg.interval)
				}
				select {
				case <-next:
				case <-sendCtx.Done():
					return
				}
			}
		})
		receivers.Go(func() {
			for recvCtx.Err() == nil {
				msgs, err := p.receiver.ReceiveMessages(recvCtx, cfg.batch, nil)
				if err != nil {
					if recvCtx.Err() == nil {
						fail(i, fmt.Errorf("receive: %w", err))
					}
					return
				}
				received.Add(int64(len(msgs)))
				for _, m := range msgs {
					if err := p.receiver.CompleteMessage(ctx, m, nil); err != nil {
						fail(i, fmt.Errorf("complete: %w", err))
						return
					}
					completed.Add(1)
				}
			}
		})
	}
	var rep latencyReport
	sampleRSS := func() {
		rss, gcs, err := serverRSS(srv)
		if err == nil {
			rep.rss = append(rep.rss, rssSample{at: time.Since(start), rss: rss, gcs: gcs, clientGCs: gcCount()})
		}
	}
	sampleRSS()
	samples := time.NewTicker(cfg.sample)
	sendersDone := make(chan struct{})
	go func() { senders.Wait(); close(sendersDone) }()
wait:
	for {
		select {
		case <-samples.C:
			sampleRSS()
			if len(rep.rss) == 3 {
				heapProfile(tb, srv, "sending") // the buffers the traffic needs are in use by now
			}
		case <-sendersDone:
			break wait
		}
	}
	samples.Stop()
	rep.elapsed = time.Since(start)
	if err := srv.Profile(false); err != nil {
		tb.Error(err)
	}
	rep.clientCPU = processCPU() - clientCPU0
	if cpu1, ok, err := srv.CPU(); ok && err == nil {
		rep.serverCPU = cpu1 - cpu0
	}
	sampleRSS()
	// Every message sent comes back before the receivers stop.
	deadline := time.Now().Add(time.Minute)
	for completed.Load() < sends.Load() && time.Now().Before(deadline) && len(runErrs) == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	stopReceiving()
	receivers.Wait()
	failOn(tb, "sending and receiving", runErrs)
	rep.sends, rep.received, rep.completed = sends.Load(), received.Load(), completed.Load()
	if rep.completed != rep.sends {
		tb.Errorf("%d messages sent, %d completed", rep.sends, rep.completed)
	}
	rep.windows = windowsOf(timed, cfg.sample)
	rep.latencies = make([]time.Duration, len(timed))
	for i, s := range timed {
		rep.latencies[i] = s.d
	}
	slices.Sort(rep.latencies)
	return rep
}

// latencyPeer is one SDK client with its sender and receiver.
type latencyPeer struct {
	client   *azservicebus.Client
	sender   *azservicebus.Sender
	receiver *azservicebus.Receiver
}

// openLatencyPeer connects an SDK client and opens its sender and receiver
// on queue (the SDK connects on the first operation: a peek opens the
// receiver's link, an empty batch the sender's).
func openLatencyPeer(ctx context.Context, connStr, queue string) (*latencyPeer, error) {
	c, err := azservicebus.NewClientFromConnectionString(connStr, &azservicebus.ClientOptions{
		RetryOptions: azservicebus.RetryOptions{MaxRetries: 2, RetryDelay: 50 * time.Millisecond, MaxRetryDelay: time.Second},
	})
	if err != nil {
		return nil, err
	}
	p := &latencyPeer{client: c}
	if p.sender, err = c.NewSender(queue, nil); err != nil {
		return p, err
	}
	if p.receiver, err = c.NewReceiverForQueue(queue, nil); err != nil {
		return p, err
	}
	if _, err := p.sender.NewMessageBatch(ctx, nil); err != nil {
		return p, fmt.Errorf("open the sender: %w", err)
	}
	if _, err := p.receiver.PeekMessages(ctx, 1, nil); err != nil {
		return p, fmt.Errorf("open the receiver: %w", err)
	}
	return p, nil
}

// serverRSS returns the listener's resident memory and its garbage
// collections so far, without collecting.
func serverRSS(srv server) (rss, gcs uint64, err error) {
	c, ok := srv.(*child)
	if !ok {
		return selfRSS(), gcCount(), nil
	}
	answer, err := c.command("rss")
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscanf(answer, "rss %d %d", &rss, &gcs); err != nil {
		return 0, 0, errors.Join(fmt.Errorf("the listener's child process answered %q", answer), err)
	}
	return rss, gcs, nil
}
