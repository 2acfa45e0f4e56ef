package front

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker/devcert"
)

// logBuf is a log destination tests can read while the front writes.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitLog waits until the log holds every part.
func (l *logBuf) waitLog(t *testing.T, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := l.String()
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(s, p)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log never held %q:\n%s", parts, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// echoAMQP is a stand-in AMQP server: it reads the 8-byte protocol header,
// answers with "AMQP" and the header it read, then echoes what follows.
type echoAMQP struct {
	mu     sync.Mutex
	conns  int
	remote []string
}

func (e *echoAMQP) serve(nc net.Conn) {
	e.mu.Lock()
	e.conns++
	e.remote = append(e.remote, nc.RemoteAddr().String())
	e.mu.Unlock()
	go func() {
		defer nc.Close()
		var h [8]byte
		if _, err := io.ReadFull(nc, h[:]); err != nil {
			return
		}
		if _, err := nc.Write(append([]byte("ECHO"), h[:]...)); err != nil {
			return
		}
		_, _ = io.Copy(nc, nc)
	}()
}

func (e *echoAMQP) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conns
}

// fixture is a front on 127.0.0.1:0 with TLS from a fresh local CA.
type fixture struct {
	t     *testing.T
	f     *Front
	addr  string
	amqp  *echoAMQP
	log   *logBuf
	roots *x509.CertPool
}

func newFixture(t *testing.T, adjust func(*Options)) *fixture {
	t.Helper()
	ca, err := devcert.Open(devcert.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.CA())
	fx := &fixture{t: t, amqp: &echoAMQP{}, log: &logBuf{}, roots: roots}
	opts := Options{
		AMQP: fx.amqp.serve,
		HTTP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "http "+r.Method+" "+r.URL.Path)
		}),
		TLS:    &tls.Config{GetCertificate: ca.GetCertificate, MinVersion: tls.VersionTLS12},
		Logger: slog.New(slog.NewTextHandler(fx.log, nil)),
	}
	if adjust != nil {
		adjust(&opts)
	}
	f, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.Serve(l) }()
	t.Cleanup(func() {
		_ = f.Close()
		if err := <-done; err != ErrClosed {
			t.Errorf("Serve returned %v, want ErrClosed", err)
		}
	})
	fx.f, fx.addr = f, l.Addr().String()
	return fx
}

// dial opens a TCP connection to the front.
func (fx *fixture) dial() net.Conn {
	fx.t.Helper()
	c, err := net.DialTimeout("tcp", fx.addr, 5*time.Second)
	if err != nil {
		fx.t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fx.t.Cleanup(func() { c.Close() })
	return c
}

// dialTLS opens a TLS connection that trusts the fixture's CA.
func (fx *fixture) dialTLS() *tls.Conn {
	fx.t.Helper()
	c := tls.Client(fx.dial(), fx.tlsConfig())
	if err := c.Handshake(); err != nil {
		fx.t.Fatalf("TLS handshake: %v", err)
	}
	return c
}

func (fx *fixture) tlsConfig() *tls.Config {
	return &tls.Config{RootCAs: fx.roots, ServerName: "localhost"}
}

// httpsClient is an HTTP client that trusts the fixture's CA.
func (fx *fixture) httpsClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: fx.tlsConfig()}}
}

// amqpRoundTrip sends a protocol header and a payload and checks the echo.
func amqpRoundTrip(t *testing.T, c net.Conn) {
	t.Helper()
	header := []byte("AMQP\x03\x01\x00\x00")
	if _, err := c.Write(append(header, "payload"...)); err != nil {
		t.Fatal(err)
	}
	want := "ECHO" + string(header) + "payload"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo: %v (got %q)", err, got)
	}
	if string(got) != want {
		t.Fatalf("echo %q, want %q", got, want)
	}
}

// expectClosed reads until the connection ends and returns what arrived.
// The end must be clean: an EOF, not a reset.
func expectClosed(t *testing.T, c net.Conn) []byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection stayed open (read %q)", b)
	}
	if err != nil {
		t.Errorf("the connection did not end cleanly: %v (read %q)", err, b)
	}
	return b
}
