package amqpserver

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/engine"
)

// ErrServerClosed is returned by Serve and ListenAndServe after Close.
var ErrServerClosed = errors.New("amqpserver: server closed")

// closeGrace bounds how long closing a connection waits for the frames
// queued before it (the close frame included) to be written.
const closeGrace = 2 * time.Second

// Server is the AMQP 1.0 listener in front of an engine. Its methods are
// safe for concurrent use.
type Server struct {
	eng  *engine.Engine
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	pending   map[*conn]struct{} // connections not authenticated yet
	leaving   int                // connections closed for lack of authentication, not gone yet
	seq       uint64             // numbers connections in their order of arrival
	addr      net.Addr
	closed    bool
	wg        sync.WaitGroup // connection goroutines

	// noisy is the log budget of refused connections (logRefusal).
	noisy *logsafe.Limiter

	// bytesIn and bytesOut count the bytes read from and written to every
	// connection since the server started (ListenerStats).
	bytesIn, bytesOut atomic.Uint64

	// panics counts recovered panics; tests assert it stays zero.
	panics atomic.Int64
	// unlist removes the server from the engine's client listers (Close).
	unlist func()
}

// New returns a server for eng. It does not listen yet: call Serve or
// ListenAndServe.
func New(eng *engine.Engine, opts Options) (*Server, error) {
	if eng == nil {
		return nil, errors.New("amqpserver: New needs an engine")
	}
	o, err := opts.normalize(eng.Clock())
	if err != nil {
		return nil, err
	}
	s := &Server{
		eng:       eng,
		opts:      o,
		log:       o.Logger,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
		pending:   make(map[*conn]struct{}),
		noisy:     logsafe.NewLimiter(peerLogBurst, peerLogInterval),
	}
	s.unlist = eng.AddClientLister(s)
	return s, nil
}

// ListenAndServe listens on the TCP address addr and serves it until Close.
func (s *Server) ListenAndServe(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("amqpserver: listen on %s: %w", addr, err)
	}
	return s.Serve(l)
}

// Serve accepts connections on l until Close (it then returns
// ErrServerClosed) or until l fails. It closes l when it returns.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	if s.addr == nil {
		s.addr = l.Addr()
	}
	s.mu.Unlock()
	s.log.Debug("AMQP listener serving", "addr", l.Addr().String())
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		_ = l.Close()
	}()
	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "in", backoff)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("amqpserver: accept: %w", err)
		}
		backoff = 0
		s.ServeConn(nc)
	}
}

// ServeConn serves one connection (from a listener, a pipe, a tunnel) in
// its own goroutines and returns at once. A connection beyond
// MaxConnections, or one arriving after Close, is closed right away; one
// beyond MaxUnauthenticated closes the oldest unauthenticated connection.
func (s *Server) ServeConn(nc net.Conn) {
	s.mu.Lock()
	if s.closed || !s.admitLocked() {
		full := !s.closed
		s.mu.Unlock()
		if full {
			s.logRefusal("connection refused: too many connections", "remote", remoteAddr(nc), "max", s.opts.MaxConnections)
		}
		_ = nc.Close()
		return
	}
	c := newConn(s, nc, rand.Uint64()|1)
	s.seq++
	c.seq = s.seq
	s.conns[c] = struct{}{}
	if !c.authed.Load() {
		s.pending[c] = struct{}{}
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.conns, c)
			delete(s.pending, c)
			if c.dropped {
				s.leaving--
			}
			s.mu.Unlock()
		}()
		c.serve()
	}()
}

// Addr returns the address of the first listener Serve was given, or nil
// before that.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Connections returns the number of open connections.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the listeners and closes every connection cleanly: each peer
// gets a close frame with amqp:connection:forced, and the locks of every
// connection are released. It waits for the connections to end.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	s.unlist()
	ls := make([]net.Listener, 0, len(s.listeners))
	for l := range s.listeners {
		ls = append(ls, l)
	}
	cs := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.terminate(&wire.Error{Condition: wire.CondConnectionForced, Description: "the listener is shutting down"})
		}()
	}
	wg.Wait()
	s.wg.Wait()
	return nil
}

func remoteAddr(nc net.Conn) string {
	if a := nc.RemoteAddr(); a != nil {
		return a.String()
	}
	return "?"
}
