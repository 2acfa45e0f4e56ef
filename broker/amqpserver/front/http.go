package front

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// httpIdleTimeout closes a kept-alive HTTP connection that sends no new
// request for this long (nginx keeps one 75 s).
const httpIdleTimeout = time.Minute

// maxHeaderBytes bounds a request's header.
const maxHeaderBytes = 64 << 10

// busyResponse is what an HTTP connection beyond MaxHTTP gets.
const busyResponse = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: 31\r\n\r\ntoo many HTTP connections open\n"

// httpSide serves the HTTP connections of a front with one http.Server,
// which takes them from a queue instead of a listener.
//
// When MaxHTTP connections are open, a new one takes the place of the one
// that has waited longest, kept alive, for its next request: clients that
// open a connection per request and never close it cannot lock out a
// newcomer. Only when every open connection is in a request is the
// newcomer refused.
type httpSide struct {
	f       *Front
	handler http.Handler
	srv     *http.Server
	q       *connQueue
	open    atomic.Int64 // HTTP connections not yet closed or hijacked
	done    chan struct{}

	mu   sync.Mutex
	idle map[net.Conn]time.Time // kept-alive connections between requests, since when
}

func newHTTPSide(f *Front) *httpSide {
	h := &httpSide{f: f, q: newConnQueue(), done: make(chan struct{}), idle: make(map[net.Conn]time.Time)}
	h.handler = &router{f: f}
	h.srv = &http.Server{
		Handler:           h.handler,
		ReadHeaderTimeout: f.opts.HandshakeTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(f.log.Handler(), slog.LevelInfo),
		ConnState:         h.connState,
	}
	go func() {
		defer close(h.done)
		_ = h.srv.Serve(h.q)
	}()
	return h
}

// connState keeps the count of open connections and the set of idle ones.
func (h *httpSide) connState(c net.Conn, s http.ConnState) {
	h.mu.Lock()
	if s == http.StateIdle {
		h.idle[c] = time.Now()
	} else {
		delete(h.idle, c)
	}
	h.mu.Unlock()
	if s == http.StateClosed || s == http.StateHijacked {
		h.open.Add(-1)
	}
}

// evictIdle closes the connection that has been idle longest; it reports
// false when none is idle.
func (h *httpSide) evictIdle() bool {
	h.mu.Lock()
	var oldest net.Conn
	var since time.Time
	for c, t := range h.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	delete(h.idle, oldest)
	h.mu.Unlock()
	if oldest == nil {
		return false
	}
	h.f.log.Info("idle HTTP connection closed to make room", "remote", remote(oldest), "idle", time.Since(since).Round(time.Millisecond), "max", h.f.opts.MaxHTTP)
	_ = oldest.Close()
	return true
}

// serve hands one HTTP connection to the server. When MaxHTTP are open it
// closes the longest-idle one first, or, with none idle, answers 503.
func (h *httpSide) serve(conn net.Conn) {
	if h.open.Add(1) > int64(h.f.opts.MaxHTTP) && !h.evictIdle() {
		h.open.Add(-1)
		h.f.log.Warn("HTTP connection refused: too many open", "remote", remote(conn), "max", h.f.opts.MaxHTTP)
		_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = conn.Write([]byte(busyResponse))
		closeGently(conn)
		return
	}
	if !h.q.push(conn) {
		h.open.Add(-1)
		_ = conn.Close()
	}
}

func (h *httpSide) close() {
	_ = h.srv.Close()
	h.q.Close()
	<-h.done
}

// connQueue is a net.Listener whose connections are pushed to it.
type connQueue struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnQueue() *connQueue {
	return &connQueue{ch: make(chan net.Conn), done: make(chan struct{})}
}

// push hands conn to Accept; it reports false after Close.
func (q *connQueue) push(conn net.Conn) bool {
	select {
	case q.ch <- conn:
		return true
	case <-q.done:
		return false
	}
}

func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

func (q *connQueue) Close() error {
	q.once.Do(func() { close(q.done) })
	return nil
}

func (q *connQueue) Addr() net.Addr { return queueAddr{} }

type queueAddr struct{}

func (queueAddr) Network() string { return "front" }
func (queueAddr) String() string  { return "front" }
