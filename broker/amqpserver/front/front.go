package front

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("front: closed")

// Defaults of Options.
const (
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultMaxPending       = 256
	DefaultMaxHTTP          = 256
	// WebSocketPath is where Service Bus serves AMQP over WebSockets.
	WebSocketPath = "/$servicebus/websocket"
)

// Options configure a Front.
type Options struct {
	// AMQP serves a connection that speaks AMQP: plain, inside TLS, or
	// inside a WebSocket. It must return at once (amqpserver.Server's
	// ServeConn does). Required.
	AMQP func(net.Conn)
	// HTTP serves HTTP requests other than the WebSocket upgrade; nil
	// refuses HTTP connections with a clean close.
	HTTP http.Handler
	// TLS is the server side of TLS connections; nil refuses them with a
	// clean close. Its certificates are used as they are.
	TLS *tls.Config
	// HandshakeTimeout bounds the time from accept until a connection has
	// said what it speaks (TLS handshake included); 0 means the default.
	HandshakeTimeout time.Duration
	// MaxPending caps the connections that have not said yet what they
	// speak; more are closed on accept. 0 means the default.
	MaxPending int
	// MaxHTTP caps open HTTP connections: a new one beyond it replaces the
	// longest-idle kept-alive one, or, with none idle, gets 503. 0
	// means the default.
	MaxHTTP int
	// Logger receives one line per refused or unrecognised connection; nil
	// discards.
	Logger *slog.Logger
}

// Front sorts connections by protocol; see the package documentation. Its
// methods are safe for concurrent use.
type Front struct {
	opts    Options
	log     *slog.Logger
	pending chan struct{} // one token per connection being sorted
	http    *httpSide

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	sorting   map[net.Conn]*sorting
	wg        sync.WaitGroup
}

// sorting is the state of a connection that has not said yet what it
// speaks. Fields are guarded by Front.mu.
type sorting struct {
	accepted time.Time
	heard    bool // it has sent a byte
	evicted  bool // closed to make room for a newcomer
}

// New returns a front for opts.
func New(opts Options) (*Front, error) {
	if opts.AMQP == nil {
		return nil, errors.New("front: Options.AMQP is required")
	}
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	if opts.MaxHTTP <= 0 {
		opts.MaxHTTP = DefaultMaxHTTP
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	f := &Front{
		opts:      opts,
		log:       opts.Logger,
		pending:   make(chan struct{}, opts.MaxPending),
		listeners: make(map[net.Listener]struct{}),
		sorting:   make(map[net.Conn]*sorting),
	}
	f.http = newHTTPSide(f)
	return f, nil
}

// Handler returns the HTTP side: Options.HTTP with the WebSocket endpoint
// in front, for an HTTP server of one's own.
func (f *Front) Handler() http.Handler { return f.http.handler }

// Serve accepts connections on l until Close (it then returns ErrClosed)
// or until l fails. It closes l when it returns.
func (f *Front) Serve(l net.Listener) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		_ = l.Close()
		return ErrClosed
	}
	f.listeners[l] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.listeners, l)
		f.mu.Unlock()
		_ = l.Close()
	}()
	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if f.isClosed() {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				f.log.Warn("accept failed; retrying", "err", err, "in", backoff)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("front: accept: %w", err)
		}
		backoff = 0
		f.ServeConn(nc)
	}
}

// evictWait bounds how long a newcomer waits for the place of the silent
// connection it evicted.
const evictWait = time.Second

// ServeConn sorts one accepted connection in its own goroutine and returns
// at once. Beyond MaxPending, the oldest connection that has not sent a
// byte yet is closed to make room (sockets that never speak must not lock
// out a client that does); with none such, or after Close, nc is closed.
func (f *Front) ServeConn(nc net.Conn) {
	select {
	case f.pending <- struct{}{}:
	default:
		if !f.evictSilent() || !f.awaitPlace() {
			f.log.Warn("connection refused: too many connections have not said what they speak yet",
				"remote", remote(nc), "max", f.opts.MaxPending)
			_ = nc.Close()
			return
		}
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		<-f.pending
		_ = nc.Close()
		return
	}
	st := &sorting{accepted: time.Now()}
	f.sorting[nc] = st
	f.wg.Add(1)
	f.mu.Unlock()
	go func() {
		defer f.wg.Done()
		next := f.sort(nc, st)
		f.mu.Lock()
		delete(f.sorting, nc)
		closed := f.closed
		f.mu.Unlock()
		<-f.pending
		if next != nil && !closed {
			next()
		} else if next != nil {
			_ = nc.Close()
		}
	}()
}

// evictSilent closes the oldest connection that has not sent a byte yet;
// it reports false when there is none.
func (f *Front) evictSilent() bool {
	f.mu.Lock()
	var oldest net.Conn
	var st *sorting
	for nc, s := range f.sorting {
		if !s.heard && !s.evicted && (st == nil || s.accepted.Before(st.accepted)) {
			oldest, st = nc, s
		}
	}
	if st != nil {
		st.evicted = true
	}
	f.mu.Unlock()
	if oldest == nil {
		return false
	}
	f.log.Info("connection closed: it has not said what it speaks since it was accepted, and a new one needs its place",
		"remote", remote(oldest), "waited", time.Since(st.accepted).Round(time.Millisecond), "max", f.opts.MaxPending)
	_ = oldest.Close()
	return true
}

// awaitPlace waits for a place among the MaxPending (an evicted
// connection's comes back once its sorting goroutine sees the close).
func (f *Front) awaitPlace() bool {
	t := time.NewTimer(evictWait)
	defer t.Stop()
	select {
	case f.pending <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

// sort finds what nc speaks within the handshake timeout and returns what
// serves it, or nil when the connection was closed.
func (f *Front) sort(nc net.Conn, st *sorting) (serve func()) {
	_ = nc.SetDeadline(time.Now().Add(f.opts.HandshakeTimeout))
	p, prefix, err := sniff(nc, func() {
		f.mu.Lock()
		st.heard = true
		f.mu.Unlock()
	})
	f.mu.Lock()
	evicted := st.evicted
	f.mu.Unlock()
	if evicted {
		return nil // evictSilent logged it
	}
	if err != nil {
		f.refuse(nc, "no protocol: the connection ended or stayed silent", prefix, "err", err)
		return nil
	}
	conn := withPrefix(nc, prefix)
	switch p {
	case protoTLS:
		if f.opts.TLS == nil {
			f.refuse(nc, "a TLS handshake on a port without TLS", prefix)
			return nil
		}
		tc := tls.Server(conn, f.opts.TLS)
		if err := tc.Handshake(); err != nil {
			f.refuse(nc, "TLS handshake failed", prefix, "err", err)
			return nil
		}
		inner, innerPrefix, err := sniff(tc, nil)
		if err != nil {
			f.refuse(tc, "no protocol inside TLS: the connection ended or stayed silent", innerPrefix, "err", err)
			return nil
		}
		if inner == protoUnknown || inner == protoTLS {
			f.refuse(tc, "not AMQP or HTTP inside TLS", innerPrefix)
			return nil
		}
		return f.dispatch(nc, withPrefix(tc, innerPrefix), inner)
	case protoAMQP, protoHTTP:
		return f.dispatch(nc, conn, p)
	}
	f.refuse(nc, "not AMQP, TLS or HTTP", prefix)
	return nil
}

// dispatch clears the handshake deadline and returns what serves conn.
func (f *Front) dispatch(raw, conn net.Conn, p protocol) func() {
	_ = raw.SetDeadline(time.Time{})
	if p == protoHTTP {
		if f.opts.HTTP == nil {
			f.refuse(conn, "HTTP on a port without HTTP", nil)
			return nil
		}
		return func() { f.http.serve(conn) }
	}
	return func() { f.opts.AMQP(conn) }
}

// refuse logs why a connection is closed, naming what arrived, and closes
// it.
func (f *Front) refuse(nc net.Conn, why string, first []byte, args ...any) {
	attrs := append([]any{"remote", remote(nc), "first_bytes", show(first)}, args...)
	f.log.Info("connection closed: "+why, attrs...)
	closeGently(nc)
}

// lingerTime bounds how long closeGently reads what a refused client still
// sends.
const lingerTime = 250 * time.Millisecond

// closeGently closes a refused connection without a reset: it ends our
// side first (FIN, or TLS close_notify), reads and drops what the client
// had sent already, and then closes. Closing a socket with unread bytes
// would send the client a reset instead of a clean end.
func closeGently(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = nc.SetReadDeadline(time.Now().Add(lingerTime))
	_, _ = io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
	_ = nc.Close()
}

func (f *Front) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// Close stops the listeners, closes the connections being sorted and the
// HTTP connections (not the AMQP ones, which belong to Options.AMQP), and
// waits for the sorting to end.
func (f *Front) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		f.wg.Wait()
		return nil
	}
	f.closed = true
	for l := range f.listeners {
		_ = l.Close()
	}
	for nc := range f.sorting {
		_ = nc.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	f.http.close()
	return nil
}

func remote(nc net.Conn) string {
	if a := nc.RemoteAddr(); a != nil {
		return a.String()
	}
	return "?"
}
