// Package metrics exposes the embedded broker to Prometheus: per entity the
// messages by state and the bytes stored, read from the engine at each
// scrape, and the counters of sends, deliveries, completions, abandons,
// expiries and dead-letters the engine keeps per entity; the AMQP
// listener's connections and links; and the Go runtime and process
// collectors. `peeklock serve` serves it at /metrics on the admin port.
package metrics
