package metrics_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/metrics"
)

// scrape GETs /metrics from the admin handler, without authorization, and
// parses it with Prometheus's text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	return fams
}

// value returns the value of the sample of family name whose labels include
// want; ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		}
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// A scrape of /metrics on the admin handler reports each entity's counts
// and event counters as the engine has them, the listener's connections,
// and the Go runtime and process collectors.
func TestScrapeMatchesEngine(t *testing.T) {
	ctx := context.Background()
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
	for _, ent := range []broker.Entity{
		{Path: "q", Kind: broker.KindQueue},
		{Path: "t", Kind: broker.KindTopic},
		{Path: "t/Subscriptions/s", Kind: broker.KindSubscription},
	} {
		if err := eng.CreateEntity(ctx, ent); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		if err := eng.Send(ctx, "q", []*broker.Message{{Body: []byte{byte(i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Send(ctx, "t", []*broker.Message{{Body: []byte("fan")}}); err != nil {
		t.Fatal(err)
	}
	ms, err := eng.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 3})
	if err != nil || len(ms) != 3 {
		t.Fatalf("receive: %d, %v", len(ms), err)
	}
	for i, kind := range []broker.SettleKind{broker.Complete, broker.Abandon, broker.DeadLetter} {
		if err := eng.Settle(ctx, broker.Settlement{Kind: kind, Entity: "q", Token: ms[i].LockToken}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1}); err != nil {
		t.Fatal(err)
	}

	// A TCP connection that has not authenticated.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	hs := httptest.NewServer(admin.NewHandler(eng, admin.Options{Metrics: metrics.Handler(eng, srv, nil)}))
	defer hs.Close()
	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams = scrape(t, hs.URL)
		if v, _ := value(fams, "peeklock_listener_connections", nil); v == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	q, err := eng.Entity(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	for state, want := range map[string]int64{
		"active": q.Counts.Active, "locked": q.Counts.Locked, "deferred": q.Counts.Deferred,
		"scheduled": q.Counts.Scheduled, "dead_lettered": q.Counts.DeadLettered,
	} {
		got, ok := value(fams, "peeklock_entity_messages", map[string]string{"entity": "q", "state": state})
		if !ok || got != float64(want) {
			t.Errorf("q %s = %v (%v), engine says %d", state, got, ok, want)
		}
	}
	if q.Counts.Active != 1 || q.Counts.Locked != 1 || q.Counts.DeadLettered != 1 {
		t.Errorf("engine counts %+v, want 1 active, 1 locked, 1 dead-lettered", q.Counts)
	}
	if got, _ := value(fams, "peeklock_entity_size_bytes", map[string]string{"entity": "q"}); got != float64(q.Counts.SizeBytes) || got == 0 {
		t.Errorf("q size = %v, engine says %d", got, q.Counts.SizeBytes)
	}
	for event, want := range map[string]float64{
		"sent": 4, "delivered": 4, "completed": 1, "abandoned": 1, "dead_lettered": 1, "expired": 0,
	} {
		got, ok := value(fams, "peeklock_entity_events_total", map[string]string{"entity": "q", "event": event})
		if !ok || got != want {
			t.Errorf("q %s = %v (%v), want %v", event, got, ok, want)
		}
	}
	if got, _ := value(fams, "peeklock_entity_messages", map[string]string{"entity": "t/Subscriptions/s", "kind": "subscription", "state": "active"}); got != 1 {
		t.Errorf("subscription active = %v, want 1", got)
	}
	if _, ok := value(fams, "peeklock_entity_messages", map[string]string{"entity": "t"}); ok {
		t.Error("a topic has message counts")
	}
	for name, want := range map[string]float64{
		"peeklock_listener_connections": 1, "peeklock_listener_unauthenticated_connections": 1,
		"peeklock_listener_links": 0, "peeklock_up": 1,
	} {
		if got, ok := value(fams, name, nil); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if fams[name] == nil {
			t.Errorf("no %s: the runtime and process collectors are missing", name)
		}
	}
}

// /metrics answers only GET and HEAD, and an admin handler without
// Options.Metrics serves none (the path is then an entity's, under
// authorization).
func TestMetricsRoute(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	with := httptest.NewServer(admin.NewHandler(eng, admin.Options{Metrics: metrics.Handler(eng, nil, nil)}))
	defer with.Close()
	req, _ := http.NewRequest(http.MethodPost, with.URL+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %s", resp.Status)
	}
	if fams := scrape(t, with.URL); fams["peeklock_listener_connections"] != nil {
		t.Error("listener metrics without a listener")
	}
	without := httptest.NewServer(admin.NewHandler(eng, admin.Options{}))
	defer without.Close()
	resp, err = http.Get(without.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /metrics without Options.Metrics: %s, want 401", resp.Status)
	}
}
