package loadtest

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/front"
	"github.com/peeklock/peeklock/broker/devcert"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// listener is a peeklock engine behind an AMQP listener on 127.0.0.1:0,
// in this process.
type listener struct {
	eng       *engine.Engine
	srv       *amqpserver.Server
	front     *front.Front // nil for a direct listener
	addr      string
	transport string
	done      chan error
}

// listenerOptions say how to start a listener.
type listenerOptions struct {
	// dataDir, when set, holds a Pebble store synced on every batch;
	// otherwise messages stay in memory.
	dataDir string
	// maxConnections is the listener's MaxConnections; 0 means its default.
	maxConnections int
	// transport is "" (direct), "front" or "tls" (envTransport); tlsDir
	// holds the local CA of "tls".
	transport, tlsDir string
	// noHistory turns the message histories off (envHistory), as serve
	// --history=false does.
	noHistory bool
}

// startListener starts an engine and a listener as o says.
func startListener(o listenerOptions) (*listener, error) {
	eo := engine.Options{NoHistory: o.noHistory}
	if o.dataDir != "" {
		st, err := store.OpenPebble(o.dataDir, store.PebbleOptions{})
		if err != nil {
			return nil, err
		}
		eo.Store = st
	}
	eng, err := engine.New(eo)
	if err != nil {
		if eo.Store != nil {
			_ = eo.Store.Close()
		}
		return nil, err
	}
	srv, err := amqpserver.New(eng, amqpserver.Options{MaxConnections: o.maxConnections})
	if err != nil {
		_ = eng.Close()
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = eng.Close()
		return nil, err
	}
	ls := &listener{eng: eng, srv: srv, addr: l.Addr().String(), transport: o.transport, done: make(chan error, 1)}
	if o.transport == "" {
		go func() { ls.done <- srv.Serve(l) }()
		return ls, nil
	}
	fo := front.Options{AMQP: srv.ServeConn}
	if o.transport == "tls" {
		ca, err := devcert.Open(devcert.Options{Dir: o.tlsDir})
		if err != nil {
			_ = l.Close()
			_ = eng.Close()
			return nil, err
		}
		fo.TLS = &tls.Config{GetCertificate: ca.GetCertificate, DynamicRecordSizingDisabled: true} // as peeklock serve
	}
	if ls.front, err = front.New(fo); err != nil {
		_ = l.Close()
		_ = eng.Close()
		return nil, err
	}
	go func() { ls.done <- ls.front.Serve(l) }()
	return ls, nil
}

// url returns the listener's URL with the default SAS key as SASL PLAIN
// credentials, which grant every right without CBS.
func (l *listener) url() string {
	scheme := "amqp"
	if l.transport == "tls" {
		scheme = "amqps"
	}
	return fmt.Sprintf("%s://%s:%s@%s", scheme, amqpserver.DefaultKeyName, amqpserver.DefaultKey, l.addr)
}

// createQueues creates the queue prefix when n is 0, or the n queues
// prefix0000, prefix0001… (queueName).
func (l *listener) createQueues(prefix string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	names := []string{prefix}
	if n > 0 {
		names = names[:0]
		for i := range n {
			names = append(names, queueName(prefix, i))
		}
	}
	for _, name := range names {
		if err := l.eng.CreateEntity(ctx, broker.Entity{Path: name, Kind: broker.KindQueue}); err != nil {
			return err
		}
	}
	return nil
}

// queueName returns the name of the i-th of numbered queues.
func queueName(prefix string, i int) string { return fmt.Sprintf("%s%04d", prefix, i) }

// close stops the listener and the engine.
func (l *listener) close() error {
	if l.front != nil {
		_ = l.front.Close()
	}
	errClose := l.srv.Close()
	errServe := <-l.done
	if errors.Is(errServe, amqpserver.ErrServerClosed) || errors.Is(errServe, front.ErrClosed) {
		errServe = nil
	}
	return errors.Join(errClose, errServe, l.eng.Close())
}

// serverMemory is what a listener's process uses, measured after a
// garbage collection.
type serverMemory struct {
	HeapAlloc   uint64 // bytes of live heap objects
	HeapInuse   uint64 // bytes in in-use heap spans
	RSS         uint64 // resident set size in bytes, 0 where unknown
	Goroutines  int
	Connections int // the listener's open connections
}

// String formats m for a log line.
func (m serverMemory) String() string {
	return fmt.Sprintf("live heap %.2f MiB, heap in use %.2f MiB, RSS %.1f MiB, %d goroutines, %d connections",
		float64(m.HeapAlloc)/(1<<20), float64(m.HeapInuse)/(1<<20), float64(m.RSS)/(1<<20), m.Goroutines, m.Connections)
}

// memory measures this process and the listener's connections. Two
// garbage collections empty the sync.Pools too.
func (l *listener) memory() serverMemory {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return serverMemory{
		HeapAlloc:   ms.HeapAlloc,
		HeapInuse:   ms.HeapInuse,
		RSS:         selfRSS(),
		Goroutines:  runtime.NumGoroutine(),
		Connections: l.srv.Connections(),
	}
}

// selfRSS reads this process's resident set size from /proc, or returns 0.
func selfRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
