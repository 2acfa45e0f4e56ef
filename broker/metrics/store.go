package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/peeklock/peeklock/broker/engine/store"
)

// StoreMetrics are the durable store's histograms: batch sizes and the
// latency of disk syncs. Give it to store.OpenPebble as the Observer, and to
// Handler to export it. Its zero value is not usable: use NewStoreMetrics.
type StoreMetrics struct {
	syncSeconds prometheus.Histogram
	batchOps    prometheus.Histogram
	batchBytes  prometheus.Histogram
}

var _ store.Observer = (*StoreMetrics)(nil)

// NewStoreMetrics returns empty store histograms.
func NewStoreMetrics() *StoreMetrics {
	return &StoreMetrics{
		syncSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "peeklock_store_sync_seconds",
			Help: "Time from a batch's commit to the end of its disk sync (group commit included), for the batches a caller waits for, such as durable sends.",
			// 50 µs to about 1.6 s.
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}),
		batchOps: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "peeklock_store_batch_ops",
			Help:    "Operations (message puts, state changes, deletes) per batch written to the store.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 12), // 1 to 2048
		}),
		batchBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "peeklock_store_batch_bytes",
			Help:    "Encoded bytes per batch written to the store.",
			Buckets: prometheus.ExponentialBuckets(64, 4, 10), // 64 B to 16 MiB
		}),
	}
}

// Batch records one batch's size (store.Observer).
func (m *StoreMetrics) Batch(ops, bytes int) {
	m.batchOps.Observe(float64(ops))
	m.batchBytes.Observe(float64(bytes))
}

// Synced records one batch's sync latency (store.Observer).
func (m *StoreMetrics) Synced(d time.Duration) { m.syncSeconds.Observe(d.Seconds()) }

// Describe sends the histograms' descriptors (prometheus.Collector).
func (m *StoreMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.syncSeconds.Describe(ch)
	m.batchOps.Describe(ch)
	m.batchBytes.Describe(ch)
}

// Collect sends the histograms (prometheus.Collector).
func (m *StoreMetrics) Collect(ch chan<- prometheus.Metric) {
	m.syncSeconds.Collect(ch)
	m.batchOps.Collect(ch)
	m.batchBytes.Collect(ch)
}
