package sshserver

import (
	"context"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/model"
)

// countingListener counts the bytes the server writes on its connections.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// TestIdleSessionBandwidth checks the target of BenchmarkIdleSessionBandwidth;
// it runs for 10 s, so only with PEEKLOCK_BENCH=1.
func TestIdleSessionBandwidth(t *testing.T) {
	if os.Getenv("PEEKLOCK_BENCH") != "1" {
		t.Skip("set PEEKLOCK_BENCH=1 to measure (10 s of real time)")
	}
	payload, wire := idleBandwidth(t, 10*time.Second)
	t.Logf("idle session with 20 locks counting down: %.0f B/s of terminal output, %.0f B/s on the wire", payload, wire)
	if payload > maxIdleBytesPerSecond {
		t.Fatalf("%.0f B/s to an idle session, want at most %d", payload, maxIdleBytesPerSecond)
	}
}

// maxIdleBytesPerSecond is the target of an idle session's output.
const maxIdleBytesPerSecond = 4096

// BenchmarkIdleSessionBandwidth measures the bytes per second sent to an
// idle 100x26 session whose Locked pane shows 20 locks counting down, over
// 10 s of real time, with the dashboard's default options. "payload-B/s" is
// the terminal output; "wire-B/s" is what goes over TCP (SSH framing and
// encryption included). The target is at most 4 KB/s. It runs once whatever
// b.N is: go test -run '^$' -bench IdleSessionBandwidth -benchtime 1x ./sshserver/
func BenchmarkIdleSessionBandwidth(b *testing.B) {
	const measure = 10 * time.Second
	for range b.N {
		payload, wire := idleBandwidth(b, measure)
		b.ReportMetric(payload, "payload-B/s")
		b.ReportMetric(wire, "wire-B/s")
	}
}

// idleBandwidth measures the output to an idle session over measure.
func idleBandwidth(tb testing.TB, measure time.Duration) (payload, wire float64) {
	e, err := engine.New(engine.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: "orders", Kind: broker.KindQueue}); err != nil {
		tb.Fatal(err)
	}
	var msgs []*broker.Message
	for i := 1; i <= 20; i++ {
		msgs = append(msgs, &broker.Message{MessageID: "m-" + itoa(i), Body: []byte("body")})
	}
	if err := e.Send(ctx, "orders", msgs); err != nil {
		tb.Fatal(err)
	}
	// Another receiver holds the 20 locks; the dashboard sees them all.
	if got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 20}); err != nil || len(got) != 20 {
		tb.Fatalf("locking 20: %d, %v", len(got), err)
	}

	var wireN atomic.Int64
	ts := newTestServer(tb, e, nil)
	ts.opts = model.Options{Theme: "dark"} // default refresh and frames
	ts.wrap = func(l net.Listener) net.Listener { return countingListener{l, &wireN} }
	ts.start()
	term := openTerm(ts.t, ts.mustDial(ts.reader), 100, 26)
	term.press("2") // focus the Locked pane
	term.waitScreen(10*time.Second, "m-20", "Locked 20")
	time.Sleep(time.Second) // let the first full frames pass

	p0, w0, t0 := term.screen.Bytes(), wireN.Load(), time.Now()
	time.Sleep(measure)
	p1, w1, t1 := term.screen.Bytes(), wireN.Load(), time.Now()
	secs := t1.Sub(t0).Seconds()
	return float64(p1-p0) / secs, float64(w1-w0) / secs
}
