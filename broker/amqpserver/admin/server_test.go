package admin

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker/engine"
)

// serveAdmin serves the admin API with opts on 127.0.0.1:0.
func serveAdmin(t *testing.T, opts ServerOptions) string {
	addr, _ := serveAdminServer(t, opts)
	return addr
}

// idleConns returns the connections the server knows to be idle.
func (s *Server) idleConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.idle)
}

func serveAdminServer(t *testing.T, opts ServerOptions) (string, *Server) {
	t.Helper()
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(NewHandler(eng, Options{}), opts)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		_ = eng.Close()
	})
	return l.Addr().String(), srv
}

// keepAlive is a raw HTTP/1.1 connection.
type keepAlive struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialHTTP(t *testing.T, addr string) *keepAlive {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return &keepAlive{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// health sends GET /health and returns the status, or 0 when the
// connection ended.
func (k *keepAlive) health(within time.Duration) int {
	k.t.Helper()
	_ = k.nc.SetDeadline(time.Now().Add(within))
	if _, err := io.WriteString(k.nc, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return 0
	}
	resp, err := http.ReadResponse(k.br, nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			k.t.Fatalf("no answer within %v", within)
		}
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// closedWithin reports whether the server closes the connection within d.
func (k *keepAlive) closedWithin(d time.Duration) bool {
	_ = k.nc.SetReadDeadline(time.Now().Add(d))
	for {
		_, err := k.br.ReadByte()
		if err == nil {
			continue
		}
		var ne net.Error
		return !errors.As(err, &ne) || !ne.Timeout()
	}
}

// TestAdminSlowHeaders: a client that trickles its headers is cut off at
// the header timeout, however steadily it sends.
func TestAdminSlowHeaders(t *testing.T) {
	addr := serveAdmin(t, ServerOptions{ReadHeaderTimeout: 300 * time.Millisecond})
	k := dialHTTP(t, addr)
	start := time.Now()
	if _, err := io.WriteString(k.nc, "GET /health HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	for time.Since(start) < 5*time.Second {
		if _, err := io.WriteString(k.nc, "X-Slow: y\r\n"); err != nil {
			break // closed
		}
		if k.closedWithin(50 * time.Millisecond) {
			break
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("slow headers held the connection for %v", d)
	}
	// A connection that sends nothing at all goes the same way.
	silent := dialHTTP(t, addr)
	if !silent.closedWithin(3 * time.Second) {
		t.Fatal("a silent connection stayed open")
	}
}

// TestAdminIdleKeepAliveClosed: keep-alive connections idle past the idle
// timeout are closed (there was no timeout: 500 idle connections stayed
// open as long as their clients liked).
func TestAdminIdleKeepAliveClosed(t *testing.T) {
	addr := serveAdmin(t, ServerOptions{IdleTimeout: 300 * time.Millisecond})
	conns := make([]*keepAlive, 500)
	for i := range conns {
		conns[i] = dialHTTP(t, addr)
		if st := conns[i].health(10 * time.Second); st != 200 {
			t.Fatalf("connection %d: status %d", i, st)
		}
	}
	for i, k := range conns {
		if !k.closedWithin(5 * time.Second) {
			t.Fatalf("idle keep-alive connection %d stayed open", i)
		}
	}
}

// TestAdminConnectionCap: beyond MaxConnections, the connection idle
// longest is closed for the newcomer; with none idle, the newcomer waits
// for a slot, which the header timeout frees.
func TestAdminConnectionCap(t *testing.T) {
	addr, srv := serveAdminServer(t, ServerOptions{MaxConnections: 4, ReadHeaderTimeout: 500 * time.Millisecond})
	idle := make([]*keepAlive, 4)
	for i := range idle {
		idle[i] = dialHTTP(t, addr)
		if st := idle[i].health(5 * time.Second); st != 200 {
			t.Fatalf("status %d", st)
		}
		// The server marks a connection idle a moment after its answer:
		// wait, so that they go idle in this order.
		deadline := time.Now().Add(5 * time.Second)
		for srv.idleConns() != i+1 {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections idle, want %d", srv.idleConns(), i+1)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if st := dialHTTP(t, addr).health(5 * time.Second); st != 200 {
		t.Fatalf("the fifth connection: status %d", st)
	}
	if !idle[0].closedWithin(time.Second) {
		t.Fatal("the connection idle longest was not closed for the newcomer")
	}
	for _, k := range idle[1:] {
		if st := k.health(5 * time.Second); st != 200 {
			t.Fatalf("a younger idle connection was closed: status %d", st)
		}
	}

	// Four connections that never finish their headers hold every slot
	// until the header timeout.
	busy := serveAdmin(t, ServerOptions{MaxConnections: 4, ReadHeaderTimeout: 500 * time.Millisecond})
	for range 4 {
		k := dialHTTP(t, busy)
		if _, err := io.WriteString(k.nc, "GET /health HTTP/1.1\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if st := dialHTTP(t, busy).health(5 * time.Second); st != 200 {
		t.Fatalf("status %d", st)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("served after %v, with every slot taken", d)
	}
}

// TestAdminHeaderLimit: headers beyond MaxHeaderBytes get 431.
func TestAdminHeaderLimit(t *testing.T) {
	addr := serveAdmin(t, ServerOptions{MaxHeaderBytes: 4 << 10})
	k := dialHTTP(t, addr)
	_ = k.nc.SetDeadline(time.Now().Add(5 * time.Second))
	req := "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n"
	if _, err := io.WriteString(k.nc, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(k.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
