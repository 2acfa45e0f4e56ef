package admin

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults of ServerOptions. A request of the admin API is a few kilobytes
// (bodies are capped at 1 MiB), so these leave a slow client ample time and
// a hostile one little hold.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = time.Minute
	DefaultWriteTimeout      = time.Minute
	DefaultIdleTimeout       = time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConnections    = 256
)

// ServerOptions are the limits of the admin API's HTTP server; zero fields
// take the defaults above.
type ServerOptions struct {
	// ReadHeaderTimeout bounds the wait for a request's headers, the first
	// request of a connection included.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (431 beyond).
	MaxHeaderBytes int
	// MaxConnections caps the open connections. A connection beyond it
	// closes the one idle longest between requests (HTTP lets a server
	// close an idle connection at any time); with none idle, it waits for
	// one to end, which the timeouts above bound.
	MaxConnections int
}

func (o ServerOptions) withDefaults() ServerOptions {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&o.ReadTimeout, DefaultReadTimeout)
	set(&o.WriteTimeout, DefaultWriteTimeout)
	set(&o.IdleTimeout, DefaultIdleTimeout)
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	return o
}

// Server is an HTTP server for the admin API with the limits of
// ServerOptions: timeouts for headers, whole requests, responses and idle
// keep-alive connections, a header size limit, and a connection cap.
type Server struct {
	http  *http.Server
	slots chan struct{} // one per open connection

	mu   sync.Mutex
	idle map[net.Conn]time.Time // connections idle between requests, since when
}

// NewServer returns a server of h with the limits of opts.
func NewServer(h http.Handler, opts ServerOptions) *Server {
	o := opts.withDefaults()
	s := &Server{
		slots: make(chan struct{}, o.MaxConnections),
		idle:  make(map[net.Conn]time.Time),
	}
	s.http = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ConnState:         s.connState,
	}
	return s
}

// Serve serves l until Close; it returns http.ErrServerClosed then.
func (s *Server) Serve(l net.Listener) error {
	cl := &capListener{Listener: l, s: s, done: make(chan struct{})}
	return s.http.Serve(cl)
}

// Close closes the listeners and every connection at once.
func (s *Server) Close() error { return s.http.Close() }

// connState keeps track of the connections idle between requests.
func (s *Server) connState(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case http.StateIdle:
		s.idle[c] = time.Now()
	default:
		delete(s.idle, c)
	}
}

// closeOldestIdle closes the connection idle longest, if any.
func (s *Server) closeOldestIdle() bool {
	s.mu.Lock()
	var oldest net.Conn
	var since time.Time
	for c, t := range s.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	if oldest != nil {
		delete(s.idle, oldest)
	}
	s.mu.Unlock()
	if oldest == nil {
		return false
	}
	_ = oldest.Close()
	return true
}

// capListener hands out connections while the server has a slot for them.
type capListener struct {
	net.Listener
	s         *Server
	done      chan struct{}
	closeOnce sync.Once
}

// Accept accepts a connection and takes a slot for it: when none is free,
// the connection idle longest is closed to make room, or else Accept waits
// for a connection to end.
func (l *capListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.s.slots <- struct{}{}:
	default:
		l.s.closeOldestIdle()
		select {
		case l.s.slots <- struct{}{}:
		case <-l.done:
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
	return &capConn{Conn: c, slots: l.s.slots}, nil
}

func (l *capListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	err := l.Listener.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// capConn gives its slot back when it closes.
type capConn struct {
	net.Conn
	slots chan struct{}
	once  sync.Once
}

func (c *capConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.slots })
	return err
}
