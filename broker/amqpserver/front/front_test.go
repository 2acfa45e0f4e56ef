package front

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		in   string
		want protocol
		more bool
	}{
		{"", protoUnknown, true},
		{"A", protoUnknown, true},
		{"AMQ", protoUnknown, true},
		{"AMQP", protoAMQP, false},
		{"AMQP\x03\x01\x00\x00", protoAMQP, false},
		{"AMQP\x01\x01\x00\x09", protoAMQP, false}, // AMQP 0-9-1: the AMQP server answers it
		{"\x16", protoTLS, false},
		{"\x16\x03\x01\x02\x00\x01", protoTLS, false},
		{"G", protoUnknown, true},
		{"GET", protoUnknown, true},
		{"GET ", protoHTTP, false},
		{"OPTIONS", protoUnknown, true},
		{"OPTIONS ", protoHTTP, false},
		{"P", protoUnknown, true},
		{"PUT /q HTTP/1.1", protoHTTP, false},
		{"GETX", protoUnknown, false},
		{"hello", protoUnknown, false},
		{"\x00\x00\x00\x00", protoUnknown, false},
		{"SSH-2.0-", protoUnknown, false},
	}
	for _, tc := range tests {
		p, more := classify([]byte(tc.in))
		if p != tc.want || more != tc.more {
			t.Errorf("classify(%q) = %v, %v; want %v, %v", tc.in, p, more, tc.want, tc.more)
		}
	}
}

func TestShowQuotesAndCuts(t *testing.T) {
	if got := show([]byte("\x16\x03\x01\x00")); got != `"\x16\x03\x01\x00"` {
		t.Errorf("show = %s", got)
	}
	if got := show([]byte("0123456789abcdefXYZ")); got != `"0123456789abcdef"…` {
		t.Errorf("show = %s", got)
	}
	if got := show([]byte("a\nlevel=ERROR")); strings.ContainsRune(got, '\n') {
		t.Errorf("show lets a newline through: %s", got)
	}
}

func TestPlainAMQP(t *testing.T) {
	fx := newFixture(t, nil)
	c := fx.dial()
	// The header in two writes: the front waits for enough bytes.
	if _, err := c.Write([]byte("AM")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := c.Write([]byte("QP\x00\x01\x00\x00")); err != nil {
		t.Fatal(err)
	}
	want := "ECHOAMQP\x00\x01\x00\x00"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
		t.Fatalf("echo %q, %v", got, err)
	}
	amqpRoundTrip(t, fx.dial())
}

func TestPlainHTTP(t *testing.T) {
	fx := newFixture(t, nil)
	res, err := http.Get("http://" + fx.addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "http GET /health" {
		t.Fatalf("body %q", body)
	}
}

func TestTLSAMQPAndHTTPS(t *testing.T) {
	fx := newFixture(t, nil)
	amqpRoundTrip(t, fx.dialTLS())
	res, err := fx.httpsClient().Get("https://" + fx.addr + "/$Resources/Queues")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "http GET /$Resources/Queues" {
		t.Fatalf("body %q", body)
	}
	// The leaf is good for every name a local client uses.
	for _, host := range []string{"127.0.0.1", "localhost"} {
		c := tls.Client(fx.dial(), &tls.Config{RootCAs: fx.roots, ServerName: host})
		if err := c.Handshake(); err != nil {
			t.Errorf("TLS to %s: %v", host, err)
		}
	}
}

func TestWebSocket(t *testing.T) {
	fx := newFixture(t, nil)
	for _, tc := range []struct {
		url, sub string
		hc       *http.Client
	}{
		{"wss://" + fx.addr + WebSocketPath, "AMQPWSB10", fx.httpsClient()},
		{"wss://" + fx.addr + WebSocketPath, "amqp", fx.httpsClient()},
		{"ws://" + fx.addr + WebSocketPath, "AMQPWSB10", nil},
		{"wss://" + fx.addr + WebSocketPath + "/", "AMQPWSB10", fx.httpsClient()}, // uamqp's path
	} {
		t.Run(tc.url+" "+tc.sub, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ws, res, err := websocket.Dial(ctx, tc.url, &websocket.DialOptions{Subprotocols: []string{tc.sub}, HTTPClient: tc.hc})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Header.Get("Sec-WebSocket-Protocol"); got != tc.sub {
				t.Errorf("subprotocol %q, want %q", got, tc.sub)
			}
			nc := websocket.NetConn(context.Background(), ws, websocket.MessageBinary)
			defer nc.Close()
			amqpRoundTrip(t, nc)
		})
	}
	if n := fx.amqp.count(); n != 4 {
		t.Errorf("%d AMQP connections, want 4", n)
	}
}

func TestWebSocketWithoutAMQPSubprotocol(t *testing.T) {
	fx := newFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, res, err := websocket.Dial(ctx, "wss://"+fx.addr+WebSocketPath, &websocket.DialOptions{Subprotocols: []string{"mqtt"}, HTTPClient: fx.httpsClient()})
	if err == nil || res == nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("dial with subprotocol mqtt: %v, %v; want 400", res, err)
	}
	fx.log.waitLog(t, "no AMQP subprotocol", "offered=mqtt")
	if fx.amqp.count() != 0 {
		t.Error("a WebSocket without the AMQP subprotocol reached the AMQP server")
	}
}

// TestHostileBytes: each client gets the protocol it asked for or a clean
// close, and the log names what arrived.
func TestHostileBytes(t *testing.T) {
	noTLS := newFixture(t, func(o *Options) { o.TLS = nil })
	fx := newFixture(t, nil)

	t.Run("TLS to a port without TLS", func(t *testing.T) {
		c := tls.Client(noTLS.dial(), fx.tlsConfig())
		if err := c.Handshake(); err == nil {
			t.Fatal("the handshake succeeded")
		}
		noTLS.log.waitLog(t, "a TLS handshake on a port without TLS", `first_bytes="\"\\x16\\x03\\x01`)
	})
	t.Run("garbage", func(t *testing.T) {
		c := fx.dial()
		_, _ = c.Write([]byte("hello world, how are you\r\n"))
		if got := expectClosed(t, c); len(got) != 0 {
			t.Errorf("garbage got an answer: %q", got)
		}
		fx.log.waitLog(t, "not AMQP, TLS or HTTP", `first_bytes="\"hello wo\""`)
	})
	t.Run("binary garbage", func(t *testing.T) {
		c := fx.dial()
		_, _ = c.Write([]byte{0, 0xff, 0x1b, '\n', 0x7f, 1, 2, 3})
		expectClosed(t, c)
		fx.log.waitLog(t, `first_bytes="\"\\x00\\xff\\x1b\\n\\x7f\\x01\\x02\\x03\""`)
	})
	t.Run("HTTP garbage", func(t *testing.T) {
		c := fx.dial()
		_, _ = c.Write([]byte("GET \x00\x01 nonsense\r\n\r\n"))
		got := string(expectClosed(t, c))
		if !strings.HasPrefix(got, "HTTP/1.1 400 ") {
			t.Errorf("HTTP garbage got %q, want a 400", got)
		}
	})
	t.Run("garbage inside TLS", func(t *testing.T) {
		c := fx.dialTLS()
		_, _ = c.Write([]byte("\x01\x02garbage"))
		expectClosed(t, c)
		fx.log.waitLog(t, "not AMQP or HTTP inside TLS", `first_bytes="\"\\x01\\x02garbag\""`)
	})
	t.Run("broken ClientHello", func(t *testing.T) {
		c := fx.dial()
		_, _ = c.Write([]byte("\x16\x03\x01\x00\x05\x01\x00\x00\x01\xff"))
		got := expectClosed(t, c)
		if len(got) > 0 && got[0] != 0x15 { // a TLS alert, if anything
			t.Errorf("a broken ClientHello got %q", got)
		}
		fx.log.waitLog(t, "TLS handshake failed", `first_bytes="\"\\x16\\x03\\x01\\x00\\x05`)
	})
	t.Run("AMQP to a port that then closes", func(t *testing.T) {
		// Still served: the front does not judge the AMQP header.
		amqpRoundTrip(t, fx.dial())
	})
	if fx.amqp.count() != 1 || noTLS.amqp.count() != 0 {
		t.Errorf("AMQP connections: %d and %d, want 1 and 0", fx.amqp.count(), noTLS.amqp.count())
	}
}

func TestHTTPOnAPortWithoutHTTP(t *testing.T) {
	fx := newFixture(t, func(o *Options) { o.HTTP = nil })
	c := fx.dial()
	_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	expectClosed(t, c)
	fx.log.waitLog(t, "HTTP on a port without HTTP")
}

func TestSilentConnectionTimesOut(t *testing.T) {
	fx := newFixture(t, func(o *Options) { o.HandshakeTimeout = 200 * time.Millisecond })
	silent := fx.dial()
	start := time.Now()
	expectClosed(t, silent)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("closed after %v", d)
	}
	fx.log.waitLog(t, "stayed silent")
	// A TLS client that stops after its handshake is timed out too.
	c := fx.dialTLS()
	expectClosed(t, c)
	fx.log.waitLog(t, "no protocol inside TLS")
}

func TestMaxPending(t *testing.T) {
	fx := newFixture(t, func(o *Options) { o.MaxPending = 2 })
	a, b := fx.dial(), fx.dial()
	_, _ = a.Write([]byte("A")) // undecided: stays pending
	_, _ = b.Write([]byte("GE"))
	fx.waitPending(2)
	fx.waitHeard(2) // neither is silent: neither gives its place away
	third := fx.dial()
	expectClosed(t, third)
	fx.log.waitLog(t, "too many connections have not said what they speak yet", "max=2")
	// Once one says what it is, there is room again.
	_, _ = a.Write([]byte("MQP\x00\x01\x00\x00"))
	fx.waitPending(1)
	amqpRoundTrip(t, fx.dial())
}

// Sockets that never send a byte do not lock out a client that speaks: at
// MaxPending, a newcomer takes the place of the oldest silent one.
func TestMaxPendingEvictsSilent(t *testing.T) {
	fx := newFixture(t, func(o *Options) { o.MaxPending = 2 })
	oldest := fx.dial()
	fx.waitPending(1)
	spoke := fx.dial()
	_, _ = spoke.Write([]byte("A")) // undecided, but it has said something
	fx.waitPending(2)
	fx.waitHeard(1)
	amqpRoundTrip(t, fx.dial())
	fx.log.waitLog(t, "it has not said what it speaks since it was accepted", "max=2")
	expectClosed(t, oldest)
	// The one that spoke kept its place and is served once it finishes.
	_, _ = spoke.Write([]byte("MQP\x00\x01\x00\x00"))
	fx.waitPending(0)
}

// waitHeard waits until n of the connections being sorted have sent a
// byte.
func (fx *fixture) waitHeard(n int) {
	fx.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		fx.f.mu.Lock()
		heard := 0
		for _, st := range fx.f.sorting {
			if st.heard {
				heard++
			}
		}
		fx.f.mu.Unlock()
		if heard == n {
			return
		}
		if time.Now().After(deadline) {
			fx.t.Fatalf("%d connections have sent a byte, want %d", heard, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitPending waits until n connections are being sorted.
func (fx *fixture) waitPending(n int) {
	fx.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(fx.f.pending) != n {
		if time.Now().After(deadline) {
			fx.t.Fatalf("%d connections pending, want %d", len(fx.f.pending), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestMaxHTTP(t *testing.T) {
	fx := newFixture(t, func(o *Options) { o.MaxHTTP = 1 })
	// One connection in the middle of a request holds the only place.
	busy := fx.dial()
	_, _ = busy.Write([]byte("GET /a HTTP/1.1\r\nHost: x\r\n"))
	fx.waitHTTP(func(h *httpSide) bool { return h.open.Load() == 1 })
	c := fx.dial()
	_, _ = c.Write([]byte("GET /b HTTP/1.1\r\nHost: x\r\n\r\n"))
	if got := string(expectClosed(t, c)); !strings.HasPrefix(got, "HTTP/1.1 503 ") {
		t.Fatalf("second connection got %q, want 503", got)
	}
	fx.log.waitLog(t, "HTTP connection refused: too many open")
	// AMQP is not HTTP: it still gets through.
	amqpRoundTrip(t, fx.dial())
	// The request ends; kept alive and idle, the connection now gives its
	// place to a newcomer and is closed.
	_, _ = busy.Write([]byte("\r\n"))
	br := bufio.NewReader(busy)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("first request: %v, %v", res, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	fx.waitHTTP(func(h *httpSide) bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.idle) == 1 })
	res, err = http.Get("http://" + fx.addr + "/c")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("newcomer beside an idle connection: %v, %v", res, err)
	}
	res.Body.Close()
	fx.log.waitLog(t, "idle HTTP connection closed to make room")
	_ = busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := br.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the idle connection stayed open (read %d bytes)", n)
	}
}

// waitHTTP waits until cond holds for the front's HTTP side.
func (fx *fixture) waitHTTP(cond func(*httpSide) bool) {
	fx.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond(fx.f.http) {
		if time.Now().After(deadline) {
			fx.t.Fatal("the HTTP side never reached the expected state")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCloseEndsPendingConnections(t *testing.T) {
	fx := newFixture(t, nil)
	c := fx.dial()
	_, _ = c.Write([]byte("AM"))
	fx.waitPending(1)
	done := make(chan struct{})
	go func() { _ = fx.f.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the pending connection stayed open: %v", err)
	}
	if _, err := net.DialTimeout("tcp", fx.addr, time.Second); err == nil {
		t.Error("the listener still accepts after Close")
	}
}
