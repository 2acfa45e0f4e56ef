// Package serve is the one assembly of what `peeklock serve` puts on its
// ports, used by the command and by the tests' fixture
// (internal/brokertest), so that tests run what users run: one front
// (package broker/amqpserver/front) sorts the connections of every port
// into AMQP (for the listener, plain, inside TLS or inside a WebSocket) and
// HTTP (the admin API, with /health and /metrics), and a port that stops
// serving before Close is reported on Errors instead of being dropped.
//
// The package takes the listener as its ServeConn function and does not
// import it, so that the listener's in-package tests can use the fixture.
package serve

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/peeklock/peeklock/broker/amqpserver/front"
)

// Options say what the ports serve.
type Options struct {
	// AMQP serves one AMQP connection and returns at once: the listener's
	// ServeConn. Required.
	AMQP func(net.Conn)
	// HTTP is the admin API; nil refuses HTTP connections.
	HTTP http.Handler
	// TLS is the server side of TLS connections; nil refuses them.
	TLS *tls.Config
	// Logger receives the front's lines; nil discards.
	Logger *slog.Logger
}

// Server serves a set of ports until Close. Its methods are safe for
// concurrent use.
type Server struct {
	fr   *front.Front
	errs chan error
	wg   sync.WaitGroup
}

// Start serves every port of ports (each closed when the Server is) and
// returns at once.
func Start(o Options, ports ...net.Listener) (*Server, error) {
	fr, err := front.New(front.Options{AMQP: o.AMQP, HTTP: o.HTTP, TLS: o.TLS, Logger: o.Logger})
	if err != nil {
		for _, l := range ports {
			_ = l.Close()
		}
		return nil, err
	}
	s := &Server{fr: fr, errs: make(chan error, len(ports))}
	for _, l := range ports {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := fr.Serve(l); !errors.Is(err, front.ErrClosed) {
				s.errs <- fmt.Errorf("serving %s stopped: %w", l.Addr(), err)
			}
		}()
	}
	return s, nil
}

// Errors reports each port that stopped serving before Close, with the
// reason; one value per port at most.
func (s *Server) Errors() <-chan error { return s.errs }

// Close stops every port, closes the connections the front still sorts,
// and waits until no port is served. It does not close the AMQP listener
// or its connections: their owner does, after.
func (s *Server) Close() error {
	err := s.fr.Close()
	s.wg.Wait()
	return err
}
