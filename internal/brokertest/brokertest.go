// Package brokertest runs the broker inside a test as `peeklock serve` runs
// it, through the same assembly (internal/serve): the engine, and one port
// on 127.0.0.1:0 that takes AMQP (plain or over WebSockets) for the
// listener and HTTP for the admin API, all closed when the test ends.
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
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"

	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/devcert"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/internal/serve"
)

// Listener is what serves AMQP in front of the engine: an
// *amqpserver.Server.
type Listener interface {
	// ServeConn serves one connection and returns at once.
	ServeConn(nc net.Conn)
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
	// Served, when set, is given, at the end of the test, the error of the
	// port if it stopped serving before then, or nil.
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
	// Addr is the port's host:port on 127.0.0.1 ("" without a listener).
	Addr string
	// AdminURL is the admin API's base URL (http://127.0.0.1:port, the
	// same port; "" without an admin API).
	AdminURL string
}

// Start runs what o says and stops it, in reverse order, when the test
// ends: the port, then the listener, then the engine if Start made it. It
// fails the test when anything cannot start.
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
	if o.Listener == nil && o.Admin == nil {
		return b
	}
	so := serve.Options{AMQP: func(nc net.Conn) { _ = nc.Close() }}
	if o.Listener != nil {
		srv, err := o.Listener(b.Engine)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() }) // after the port closes
		b.Listener, so.AMQP = srv, srv.ServeConn
	}
	if o.Admin != nil {
		so.HTTP = admin.NewHandler(b.Engine, *o.Admin)
	}
	addr := servePort(t, so, o.Served)
	if o.Listener != nil {
		b.Addr = addr
	}
	if o.Admin != nil {
		b.AdminURL = "http://" + addr
	}
	return b
}

// ServePort serves o on a new port on 127.0.0.1 through the serve assembly
// until the test ends, which fails if the port stopped serving before, and
// returns the port's host:port: a second door to a broker Start runs, such
// as one with TLS (LocalCA).
func ServePort(t testing.TB, o serve.Options) string {
	t.Helper()
	return servePort(t, o, func(err error) {
		if err != nil {
			t.Errorf("the port stopped serving: %v", err)
		}
	})
}

// servePort is ServePort that gives served the port's error at the end of
// the test (nil when it served until then).
func servePort(t testing.TB, o serve.Options, served func(error)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.Start(o, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		var err error
		select {
		case err = <-s.Errors():
		default:
		}
		if served != nil {
			served(err)
		}
	})
	return l.Addr().String()
}

// LocalCA makes a fresh local certificate authority (package devcert, as
// serve makes one) in a temporary directory, and returns the server side
// of TLS with its certificate for localhost, the pool that trusts it and
// the CA file's path.
func LocalCA(t testing.TB) (server *tls.Config, roots *x509.CertPool, caPath string) {
	t.Helper()
	ca, err := devcert.Open(devcert.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AddCert(ca.CA())
	return &tls.Config{GetCertificate: ca.GetCertificate}, roots, ca.CAPath()
}
