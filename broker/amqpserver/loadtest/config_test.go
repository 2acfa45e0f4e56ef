package loadtest

import (
	"crypto/tls"
	"fmt"
	"os"
	"strconv"
)

// Environment variables of the throughput benchmarks. Every one is
// optional; the defaults are those of the comparison with RabbitMQ.
const (
	// envURL names the broker to measure, amqp://user:pass@host:port
	// (SASL PLAIN with the user and password). Empty: a peeklock listener
	// started by the benchmark.
	envURL = "PEEKLOCK_LOADTEST_URL"
	// envAddress is the link address of the queue, for instance
	// /queue/bench for RabbitMQ (which declares it). Default: bench, the
	// queue that the benchmark creates in peeklock.
	envAddress = "PEEKLOCK_LOADTEST_ADDRESS"
	// envDurable set to 1 makes the run durable: messages with
	// header durable=true and links with terminus durability
	// unsettled-state (RabbitMQ then declares a durable queue and persists
	// the messages); peeklock keeps its messages in Pebble, each send
	// acknowledged after the disk sync.
	envDurable = "PEEKLOCK_LOADTEST_DURABLE"
	// envMessages is N, the messages per send or receive phase.
	envMessages = "PEEKLOCK_LOADTEST_N"
	// envSize is the body size in bytes.
	envSize = "PEEKLOCK_LOADTEST_SIZE"
	// envConnections is the number of connections of the senders, each
	// with one session over which the senders are spread round-robin; each
	// receive phase opens as many again for its receivers.
	envConnections = "PEEKLOCK_LOADTEST_CONNECTIONS"
	// envSenders is the number of sender links.
	envSenders = "PEEKLOCK_LOADTEST_SENDERS"
	// envInFlight is the number of goroutines that send, shared round-robin
	// by the sender links: the sends waiting for their outcome at once.
	envInFlight = "PEEKLOCK_LOADTEST_INFLIGHT"
	// envReceivers is the number of receiver links.
	envReceivers = "PEEKLOCK_LOADTEST_RECEIVERS"
	// envCredit is the link credit of each receiver.
	envCredit = "PEEKLOCK_LOADTEST_CREDIT"
	// envAcceptors is the number of goroutines per receiver link that
	// receive and accept.
	envAcceptors = "PEEKLOCK_LOADTEST_ACCEPTORS"
	// envInProcess set to 1 runs the peeklock listener inside the test
	// process (so that -cpuprofile sees it) instead of in a child process.
	envInProcess = "PEEKLOCK_LOADTEST_INPROCESS"
	// envTransport chooses how the client reaches a peeklock listener:
	// "direct" (the default: the listener's own Serve on a TCP socket),
	// "front" (plain AMQP through package front, as peeklock serve's ports
	// take it) or "tls" (AMQP over TLS through the front, with a local CA
	// of package devcert).
	envTransport = "PEEKLOCK_LOADTEST_TRANSPORT"
	// envServerProfile names a file to which a child-process listener
	// writes its CPU profile of the timed phases only (the untimed filling
	// and draining of a benchmark left out): the first to FILE, later ones
	// to FILE.2, FILE.3, ... (each listener started overwrites them).
	envServerProfile = "PEEKLOCK_LOADTEST_SERVER_CPUPROFILE"
	// envServerTrace names a file to which a child-process listener
	// writes an execution trace (go tool trace; -pprof=sched shows where
	// goroutines waited to run), overwritten like the profile.
	envServerTrace = "PEEKLOCK_LOADTEST_SERVER_TRACE"
	// envHistory set to 0 turns the message histories of a peeklock
	// listener off, as serve --history=false does (default: on, as serve).
	envHistory = "PEEKLOCK_LOADTEST_HISTORY"
)

// config is one throughput run's setting, read from the environment.
type config struct {
	url         string
	address     string
	durable     bool
	messages    int
	size        int
	connections int
	senders     int
	inFlight    int
	receivers   int
	credit      int
	acceptors   int
	inProcess   bool
	transport   string
	// tlsConfig trusts the local CA of a "tls" listener (set by setup).
	tlsConfig *tls.Config
}

// defaultConfig is the setting used when the environment says nothing.
// RabbitMQ 3.10 sent 23,000 to 26,000 and received 18,000 to 22,000 msg/s
// with each of 1 to 4 connections, 1 to 8 senders, 64 or 128 in flight and
// 1 to 4 receivers: this setting does not favour peeklock, which gains from
// more connections because go-amqp writes one frame per system call and
// per connection.
func defaultConfig() config {
	return config{
		address:     "bench",
		messages:    100_000,
		size:        1024,
		connections: 4,
		senders:     4,
		inFlight:    64,
		receivers:   4,
		credit:      1000,
		acceptors:   2,
	}
}

// configFromEnv reads the benchmarks' environment variables over the
// defaults.
func configFromEnv() (config, error) {
	c := defaultConfig()
	c.url = os.Getenv(envURL)
	if a := os.Getenv(envAddress); a != "" {
		c.address = a
	}
	var err error
	if c.durable, err = envFlag(envDurable); err != nil {
		return c, err
	}
	if c.inProcess, err = envFlag(envInProcess); err != nil {
		return c, err
	}
	switch c.transport = os.Getenv(envTransport); c.transport {
	case "", "direct":
		c.transport = ""
	case "front", "tls":
	default:
		return c, fmt.Errorf("%s=%q: want direct, front or tls", envTransport, c.transport)
	}
	ints := []struct {
		name string
		dst  *int
		max  int
	}{
		{envMessages, &c.messages, 100_000_000},
		{envSize, &c.size, 1 << 20},
		{envConnections, &c.connections, 256},
		{envSenders, &c.senders, 256},
		{envInFlight, &c.inFlight, 1 << 16},
		{envReceivers, &c.receivers, 256},
		{envCredit, &c.credit, 1 << 20},
		{envAcceptors, &c.acceptors, 1024},
	}
	for _, v := range ints {
		if *v.dst, err = envInt(v.name, *v.dst, v.max); err != nil {
			return c, err
		}
	}
	return c, nil
}

// envFlag reads a variable that is unset, 0 or 1.
func envFlag(name string) (bool, error) {
	switch v := os.Getenv(name); v {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want 0 or 1", name, v)
	}
}

// envInt reads a positive integer variable of at most hi, or def when it
// is unset.
func envInt(name string, def, hi int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > hi {
		return 0, fmt.Errorf("%s=%q: want an integer from 1 to %d", name, v, hi)
	}
	return n, nil
}
