package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/engine"
)

// scrapeTimeout bounds reading the engine for one scrape.
const scrapeTimeout = 10 * time.Second

// Listener is what the collector reads of the AMQP listener;
// *amqpserver.Server implements it.
type Listener interface {
	Stats() amqpserver.ListenerStats
}

// collector reads the engine (and the listener, if any) at each scrape.
type collector struct {
	eng *engine.Engine
	lis Listener

	messages, size            *prometheus.Desc
	events                    *prometheus.Desc
	conns, unauthConns, links *prometheus.Desc
	bytesIn, bytesOut         *prometheus.Desc
	up                        *prometheus.Desc
}

// counted are the event kinds exported as counters, with their label.
var counted = []struct {
	label string
	kinds []broker.EventKind
}{
	{"sent", []broker.EventKind{broker.EventSent, broker.EventScheduled}},
	{"delivered", []broker.EventKind{broker.EventLocked, broker.EventReceived}},
	{"completed", []broker.EventKind{broker.EventCompleted}},
	{"abandoned", []broker.EventKind{broker.EventAbandoned}},
	{"expired", []broker.EventKind{broker.EventExpired}},
	{"dead_lettered", []broker.EventKind{broker.EventDeadLettered}},
	{"lock_expired", []broker.EventKind{broker.EventLockExpired}},
}

// NewCollector returns a Prometheus collector of eng and, when lis is not
// nil, of the listener in front of it. It costs the broker nothing between
// scrapes.
func NewCollector(eng *engine.Engine, lis Listener) prometheus.Collector {
	labels := []string{"entity", "kind"}
	return &collector{
		eng: eng,
		lis: lis,
		messages: prometheus.NewDesc("peeklock_entity_messages",
			"Messages of an entity by state (active, locked, deferred, scheduled, dead_lettered, transfer_dead_lettered).",
			append(labels, "state"), nil),
		size: prometheus.NewDesc("peeklock_entity_size_bytes",
			"Bytes of the messages an entity stores.", labels, nil),
		events: prometheus.NewDesc("peeklock_entity_events_total",
			"Message events of an entity since the broker started, by event: sent (scheduled included), delivered (peek-lock and receive-and-delete), completed, abandoned, expired, dead_lettered, lock_expired.",
			append(labels, "event"), nil),
		conns: prometheus.NewDesc("peeklock_listener_connections",
			"Open AMQP connections.", nil, nil),
		unauthConns: prometheus.NewDesc("peeklock_listener_unauthenticated_connections",
			"Open AMQP connections that hold no right yet.", nil, nil),
		links: prometheus.NewDesc("peeklock_listener_links",
			"Attached AMQP links to entities.", nil, nil),
		bytesIn: prometheus.NewDesc("peeklock_listener_received_bytes_total",
			"Bytes read from AMQP connections (frames and protocol headers).", nil, nil),
		bytesOut: prometheus.NewDesc("peeklock_listener_sent_bytes_total",
			"Bytes written to AMQP connections (frames and protocol headers).", nil, nil),
		up: prometheus.NewDesc("peeklock_up",
			"1 when the engine answered the scrape.", nil, nil),
	}
}

// Describe sends every descriptor.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.messages, c.size, c.events, c.up} {
		ch <- d
	}
	if c.lis != nil {
		ch <- c.conns
		ch <- c.unauthConns
		ch <- c.links
		ch <- c.bytesIn
		ch <- c.bytesOut
	}
}

// Collect reads the engine and the listener.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	stats, err := c.eng.Stats(ctx)
	up := 1.0
	if err != nil {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up)
	for i := range stats {
		c.collectEntity(ch, &stats[i])
	}
	if c.lis != nil {
		st := c.lis.Stats()
		ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(st.Connections))
		ch <- prometheus.MustNewConstMetric(c.unauthConns, prometheus.GaugeValue, float64(st.Unauthenticated))
		ch <- prometheus.MustNewConstMetric(c.links, prometheus.GaugeValue, float64(st.Links))
		ch <- prometheus.MustNewConstMetric(c.bytesIn, prometheus.CounterValue, float64(st.BytesIn))
		ch <- prometheus.MustNewConstMetric(c.bytesOut, prometheus.CounterValue, float64(st.BytesOut))
	}
}

func (c *collector) collectEntity(ch chan<- prometheus.Metric, st *engine.EntityStats) {
	kind := st.Kind.String()
	if st.Kind != broker.KindTopic {
		n := st.Counts
		for _, s := range []struct {
			state string
			v     int64
		}{
			{"active", n.Active}, {"locked", n.Locked}, {"deferred", n.Deferred},
			{"scheduled", n.Scheduled}, {"dead_lettered", n.DeadLettered},
			{"transfer_dead_lettered", n.TransferDeadLettered},
		} {
			ch <- prometheus.MustNewConstMetric(c.messages, prometheus.GaugeValue, float64(s.v), st.Path, kind, s.state)
		}
		ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(n.SizeBytes), st.Path, kind)
	}
	for _, e := range counted {
		var v uint64
		for _, k := range e.kinds {
			v += st.Event(k)
		}
		ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(v), st.Path, kind, e.label)
	}
}

// Handler returns the HTTP handler of /metrics: a registry of its own with
// the broker's collector, the store's histograms when st is not nil (a
// durable store given st as its Observer), and the Go runtime and process
// collectors. Errors of the exposition are answered, not panicked on.
func Handler(eng *engine.Engine, lis Listener, st *StoreMetrics) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(eng, lis),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if st != nil {
		reg.MustRegister(st)
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
