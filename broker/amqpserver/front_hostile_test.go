package amqpserver

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker/engine"
)

// syncBuf is a log destination read while connections write to it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFrontHostileBytes: on the listener's port behind the front, each
// client gets the protocol it asked for or a clean close, and the log names
// what arrived: an AMQP header of another version (plain and inside TLS)
// gets AMQP's own header back, HTTP gets HTTP.
func TestFrontHostileBytes(t *testing.T) {
	log := &syncBuf{}
	env := newFrontEnv(t, engine.Options{}, Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	addr := "127.0.0.1:" + env.port
	ask := func(c net.Conn, send string) []byte {
		t.Helper()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, send); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("after %q: %v (read %q)", send, err, got)
		}
		return got
	}
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	const amqp091 = "AMQP\x00\x00\x09\x01"
	if got := ask(dial(), amqp091); string(got) != "AMQP\x03\x01\x00\x00" {
		t.Errorf("an AMQP 0-9-1 header got %q, want the AMQP 1.0 SASL header", got)
	}
	tc := tls.Client(dial(), env.tlsConfig())
	if got := ask(tc, amqp091); string(got) != "AMQP\x03\x01\x00\x00" {
		t.Errorf("an AMQP 0-9-1 header inside TLS got %q, want the AMQP 1.0 SASL header", got)
	}
	waitFor(t, 5*time.Second, "the log", func() bool {
		return strings.Count(log.String(), `msg="refused protocol header"`) == 2
	})
	if !strings.Contains(log.String(), "Major:0 Minor:9 Revision:1") {
		t.Errorf("the log does not name the header that arrived:\n%s", log.String())
	}
	res, err := http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"status":"healthy"`) {
		t.Errorf("HTTP on the AMQP port: %d %s", res.StatusCode, body)
	}
}
