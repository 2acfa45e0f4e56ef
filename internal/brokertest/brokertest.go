// Package brokertest runs the broker inside a test as `peeklock serve` runs
// it: the engine, the AMQP listener on 127.0.0.1:0 and the admin API on an
// httptest server of its own, all closed when the test ends.
//
// The listener is made by a function the test passes (Options.Listener),
// usually amqpserver.New with the test's options. The package does not
// import the listener itself, so that the listener's own in-package tests
// can use it without an import cycle.
//
//	b := brokertest.Start(t, brokertest.Options{
//		Listener: func(e *engine.Engine) (brokertest.Listener, error) { return amqpserver.New(e, amqpserver.Options{}) },
//		Admin:    &admin.Options{Host: "127.0.0.1"},
//	})
//	// dial b.Addr with a connection string, b.AdminURL for the admin API
package brokertest

import (
	"net"
	"net/http/httptest"
	"testing"

	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/engine"
)

// Listener is what serves AMQP in front of the engine: an
// *amqpserver.Server.
type Listener interface {
	// Serve accepts connections on l until Close.
	Serve(l net.Listener) error
	// Close stops serving and closes every connection.
	Close() error
}

// Options say what Start runs.
type Options struct {
	// Engine is an engine the test made and closes itself; nil means Start
	// makes one from EngineOptions and closes it when the test ends.
	Engine *engine.Engine
	// EngineOptions are the options of the engine Start makes.
	EngineOptions engine.Options
	// Listener makes the AMQP listener in front of the engine; nil means
	// no listener (Broker.Addr is "").
	Listener func(*engine.Engine) (Listener, error)
	// Served, when set, is given what the listener's Serve returned, once
	// it has returned after Close at the end of the test.
	Served func(error)
	// Admin are the options of the admin API; nil means no admin API
	// (Broker.AdminURL is "").
	Admin *admin.Options
}

// Broker is a running broker.
type Broker struct {
	// Engine is the engine behind the listener and the admin API.
	Engine *engine.Engine
	// Listener is the AMQP listener; nil without one.
	Listener Listener
	// Addr is the listener's host:port on 127.0.0.1.
	Addr string
	// AdminURL is the admin API's base URL (http://127.0.0.1:port).
	AdminURL string
}

// Start runs what o says and stops it, in reverse order, when the test
// ends: the admin API, then the listener (waiting for Serve to return),
// then the engine if Start made it. It fails the test when anything cannot
// start.
func Start(t testing.TB, o Options) *Broker {
	t.Helper()
	b := &Broker{Engine: o.Engine}
	if b.Engine == nil {
		eng, err := engine.New(o.EngineOptions)
		if err != nil {
			t.Fatal(err)
		}
		b.Engine = eng
		t.Cleanup(func() { _ = eng.Close() })
	}
	if o.Listener != nil {
		srv, err := o.Listener(b.Engine)
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = srv.Close()
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(l) }()
		t.Cleanup(func() {
			_ = srv.Close()
			err := <-done
			if o.Served != nil {
				o.Served(err)
			}
		})
		b.Listener, b.Addr = srv, l.Addr().String()
	}
	if o.Admin != nil {
		hs := httptest.NewServer(admin.NewHandler(b.Engine, *o.Admin))
		t.Cleanup(hs.Close)
		b.AdminURL = hs.URL
	}
	return b
}
