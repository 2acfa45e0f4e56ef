package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestServeMetrics scrapes `peeklock serve`'s /metrics on the admin port,
// without a signature, while an SDK client is connected: the sends it made,
// its connection, the bytes it moved and the store's syncs (--data) are
// counted.
func TestServeMetrics(t *testing.T) {
	config := filepath.Join(t.TempDir(), "Config.json")
	if err := os.WriteFile(config, []byte(`{"UserConfig":{"Namespaces":[{"Name":"sbemulatorns",
		"Queues":[{"Name":"queue.1","Properties":{}}]}],"Logging":{"Type":"File"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	conn, adminAddr, stop := startServe(t, "--config", config, "--data", filepath.Join(t.TempDir(), "data"))
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := azservicebus.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(ctx)
	sender, err := client.NewSender("queue.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("m")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	res, err := http.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d, %v", res.StatusCode, err)
	}
	sent := -1.0
	for _, m := range fams["peeklock_entity_events_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["entity"] == "queue.1" && labels["event"] == "sent" {
			sent = m.GetCounter().GetValue()
		}
	}
	if sent != 2 {
		t.Errorf("sent to queue.1 = %v, want 2", sent)
	}
	if c := fams["peeklock_listener_connections"].GetMetric(); len(c) != 1 || c[0].GetGauge().GetValue() < 1 {
		t.Errorf("listener connections: %v", c)
	}
	// The durable sends waited for the disk: the store's histogram has them.
	if h := fams["peeklock_store_sync_seconds"].GetMetric(); len(h) != 1 || h[0].GetHistogram().GetSampleCount() < 2 {
		t.Errorf("store sync latency: %v", h)
	}
	for _, name := range []string{"peeklock_listener_received_bytes_total", "peeklock_listener_sent_bytes_total"} {
		if c := fams[name].GetMetric(); len(c) != 1 || c[0].GetCounter().GetValue() == 0 {
			t.Errorf("%s: %v", name, c)
		}
	}
}
