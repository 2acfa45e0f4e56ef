package metrics_test

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
	"github.com/peeklock/peeklock/broker/metrics"
)

// histogram returns the sample count and sum of the histogram family name.
func histogram(t *testing.T, fams map[string]*dto.MetricFamily, name string) (uint64, float64) {
	t.Helper()
	f := fams[name]
	if f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetHistogram() == nil {
		t.Fatalf("no histogram %s in the scrape", name)
	}
	h := f.GetMetric()[0].GetHistogram()
	return h.GetSampleCount(), h.GetSampleSum()
}

// Durable sends on a Pebble store are counted in the store's histograms:
// each send waits for one synced batch (sync latency), and each batch's ops
// and bytes are recorded.
func TestScrapeStoreHistograms(t *testing.T) {
	ctx := context.Background()
	sm := metrics.NewStoreMetrics()
	st, err := store.OpenPebble(t.TempDir(), store.PebbleOptions{Observer: sm})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.CreateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(admin.NewHandler(eng, admin.Options{Metrics: metrics.Handler(eng, nil, sm)}))
	defer hs.Close()

	fams := scrape(t, hs.URL)
	syncs0, _ := histogram(t, fams, "peeklock_store_sync_seconds")
	batches0, ops0 := histogram(t, fams, "peeklock_store_batch_ops")
	_, bytes0 := histogram(t, fams, "peeklock_store_batch_bytes")
	const sends = 5
	body := make([]byte, 1000)
	for range sends {
		if err := eng.Send(ctx, "q", []*broker.Message{{Body: body}}); err != nil {
			t.Fatal(err)
		}
	}
	fams = scrape(t, hs.URL)
	syncs, secs := histogram(t, fams, "peeklock_store_sync_seconds")
	batches, ops := histogram(t, fams, "peeklock_store_batch_ops")
	_, bytes := histogram(t, fams, "peeklock_store_batch_bytes")
	if syncs-syncs0 < sends || secs <= 0 {
		t.Errorf("sync latency: %d samples after %d durable sends (from %d), sum %v s", syncs, sends, syncs0, secs)
	}
	if batches-batches0 < sends || ops-ops0 < sends {
		t.Errorf("batches: %d (from %d) with %v ops (from %v) after %d sends", batches, batches0, ops, ops0, sends)
	}
	if bytes-bytes0 < sends*float64(len(body)) {
		t.Errorf("batch bytes grew by %v after %d sends of %d bytes", bytes-bytes0, sends, len(body))
	}
}

// The listener's byte counters count what connections read and wrote: a
// peer that sends the 8-byte SASL protocol header and reads the reply.
func TestScrapeListenerBytes(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := amqpserver.New(eng, amqpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	hs := httptest.NewServer(admin.NewHandler(eng, admin.Options{Metrics: metrics.Handler(eng, srv, nil)}))
	defer hs.Close()
	if in, _ := value(scrape(t, hs.URL), "peeklock_listener_received_bytes_total", nil); in != 0 {
		t.Fatalf("received bytes before any connection: %v", in)
	}

	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Write([]byte("AMQP\x03\x01\x00\x00")); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	reply := make([]byte, 8)
	if _, err := io.ReadFull(nc, reply); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams := scrape(t, hs.URL)
		in, _ := value(fams, "peeklock_listener_received_bytes_total", nil)
		out, _ := value(fams, "peeklock_listener_sent_bytes_total", nil)
		if in == 8 && out > 8 { // the header, then the sasl-mechanisms frame
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("received %v bytes (want 8), sent %v (want more than 8)", in, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
