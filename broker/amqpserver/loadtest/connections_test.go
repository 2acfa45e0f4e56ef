package loadtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
)

// envServerHeapProfile names the files (with suffixes .open and .closed)
// to which the listener of a many-connections run writes its heap profile
// while every connection is open and after they all closed.
const envServerHeapProfile = "PEEKLOCK_LOADTEST_SERVER_HEAPPROFILE"

// Bounds of the many-connections runs.
const (
	// dialParallel bounds the connections being opened at once.
	dialParallel = 32
	// connWait bounds a whole many-connections run.
	connWait = 5 * time.Minute
	// maxHeapPerConn bounds the listener's live heap per open connection
	// with a session, a sender and a receiver. Measured: about 100 KiB, of
	// which 64 KiB is the connection's read buffer, 15 KiB the settlement
	// queue of the receiver's link and 10 KiB the write queue.
	maxHeapPerConn = 128 << 10
	// settleSlack and settleSlackPerConn bound how much the listener's live
	// heap may stay above its level before the connections, once they are
	// all closed: the runtime keeps the descriptors of ended goroutines for
	// reuse (six per connection), and maps keep the room they grew to.
	// Measured with 1,000 connections: 4.4 MiB. A connection that is not
	// freed keeps about 100 KiB.
	settleSlack        = 2 << 20
	settleSlackPerConn = 8 << 10
	// settleWait bounds the wait for the listener to free the connections
	// after the clients closed them.
	settleWait = 10 * time.Second
)

// connReport is the listener's memory at the steps of a many-connections
// run.
type connReport struct {
	n                            int
	before, open, traffic, after serverMemory
}

// heapPerConn and rssPerConn are the growth of the live heap and of the
// resident set per open connection.
func (r connReport) heapPerConn() float64 {
	return (float64(r.open.HeapAlloc) - float64(r.before.HeapAlloc)) / float64(r.n)
}

func (r connReport) rssPerConn() float64 {
	return (float64(r.open.RSS) - float64(r.before.RSS)) / float64(r.n)
}

// log writes the report.
func (r connReport) log(tb testing.TB) {
	tb.Logf("before: %v", r.before)
	tb.Logf("%d connections open: %v", r.n, r.open)
	tb.Logf("after their messages: %v", r.traffic)
	tb.Logf("after closing them: %v", r.after)
	tb.Logf("per open connection: live heap %.1f KiB, RSS %.1f KiB", r.heapPerConn()/1024, r.rssPerConn()/1024)
}

// peerConn is one client connection with its sender and receiver.
type peerConn struct {
	conn *amqp.Conn
	snd  *amqp.Sender
	rcv  *amqp.Receiver
}

// runConnections opens n concurrent connections to a peeklock listener
// in a child process, each with a session, a sender and a receiver on its
// own queue; each sends perConn messages and receives and accepts them, in
// order; then all close. Any error fails tb. It returns the listener's
// memory along the way.
func runConnections(tb testing.TB, n, perConn int) connReport {
	tb.Helper()
	srv := startPeeklock(tb, listenerOptions{maxConnections: 2 * n}, false)
	if err := srv.CreateQueues("c", n); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), connWait)
	defer cancel()
	rep := connReport{n: n, before: mustMemory(tb, srv)}

	peers := make([]*peerConn, n)
	tb.Cleanup(func() {
		for _, p := range peers {
			if p != nil {
				_ = p.conn.Close()
			}
		}
	})
	errs := forEach(n, dialParallel, func(i int) error {
		p, err := openPeer(ctx, srv.URL(), queueName("c", i), perConn)
		peers[i] = p
		return err
	})
	failOn(tb, "opening the connections", errs)
	rep.open = mustMemory(tb, srv)
	heapProfile(tb, srv, "open")
	if rep.open.Connections != n {
		tb.Fatalf("the listener has %d connections open, want %d", rep.open.Connections, n)
	}

	errs = forEach(n, n, func(i int) error { return peers[i].exchange(ctx, i, perConn) })
	failOn(tb, "sending and receiving", errs)
	rep.traffic = mustMemory(tb, srv)

	errs = forEach(n, dialParallel, func(i int) error {
		err := peers[i].conn.Close()
		peers[i] = nil
		return err
	})
	failOn(tb, "closing the connections", errs)
	// The listener ends a connection's goroutines, and frees its memory,
	// a moment after the client's close.
	slack := uint64(settleSlack + n*settleSlackPerConn)
	start := time.Now()
	for {
		rep.after = mustMemory(tb, srv)
		if rep.after.Connections == 0 && rep.after.Goroutines <= rep.before.Goroutines &&
			rep.after.HeapAlloc <= rep.before.HeapAlloc+slack || time.Since(start) > settleWait {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Logf("the listener settled %v after the clients closed", time.Since(start).Round(time.Millisecond))
	heapProfile(tb, srv, "closed")
	rep.log(tb)
	if rep.after.Connections != 0 {
		tb.Errorf("%d connections are still open on the listener after the clients closed theirs", rep.after.Connections)
	}
	if rep.after.Goroutines > rep.before.Goroutines {
		tb.Errorf("the listener runs %d goroutines after the connections closed, %d before them", rep.after.Goroutines, rep.before.Goroutines)
	}
	if per := rep.heapPerConn(); per > maxHeapPerConn {
		tb.Errorf("the listener's live heap grew by %.0f bytes per connection, more than %d", per, maxHeapPerConn)
	}
	if rep.after.HeapAlloc > rep.before.HeapAlloc+slack {
		tb.Errorf("the listener's live heap is %d bytes after the connections closed, %d before them", rep.after.HeapAlloc, rep.before.HeapAlloc)
	}
	return rep
}

// heapProfile writes the heap profile of a listener in a child process to
// the file that PEEKLOCK_LOADTEST_SERVER_HEAPPROFILE names, suffixed with
// "." and step, if the variable is set.
func heapProfile(tb testing.TB, srv server, step string) {
	tb.Helper()
	path := os.Getenv(envServerHeapProfile)
	c, ok := srv.(*child)
	if path == "" || !ok {
		return
	}
	if _, err := c.command("heap " + path + "." + step); err != nil {
		tb.Fatal(err)
	}
}

// mustMemory measures the listener or fails tb.
func mustMemory(tb testing.TB, srv server) serverMemory {
	tb.Helper()
	m, err := srv.Memory()
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// openPeer connects with SASL PLAIN and attaches a sender and a receiver
// with credit for perConn messages to queue.
func openPeer(ctx context.Context, url, queue string, perConn int) (*peerConn, error) {
	conn, err := amqp.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	p := &peerConn{conn: conn}
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		return p, fmt.Errorf("begin a session: %w", err)
	}
	if p.snd, err = s.NewSender(ctx, queue, nil); err != nil {
		return p, fmt.Errorf("attach a sender to %s: %w", queue, err)
	}
	if p.rcv, err = s.NewReceiver(ctx, queue, &amqp.ReceiverOptions{Credit: int32(perConn)}); err != nil {
		return p, fmt.Errorf("attach a receiver to %s: %w", queue, err)
	}
	return p, nil
}

// exchange sends perConn messages, each waiting for acceptance, then
// receives them, checks that they come back in order, and accepts them.
func (p *peerConn) exchange(ctx context.Context, i, perConn int) error {
	for k := range perConn {
		if err := p.snd.Send(ctx, amqp.NewMessage(connBody(i, k)), nil); err != nil {
			return fmt.Errorf("send message %d: %w", k, err)
		}
	}
	for k := range perConn {
		msg, err := p.rcv.Receive(ctx, nil)
		if err != nil {
			return fmt.Errorf("receive message %d: %w", k, err)
		}
		if got, want := string(msg.GetData()), string(connBody(i, k)); got != want {
			return fmt.Errorf("received %q, want %q", got, want)
		}
		if err := p.rcv.AcceptMessage(ctx, msg); err != nil {
			return fmt.Errorf("accept message %d: %w", k, err)
		}
	}
	return nil
}

// connBody is the body of message k of connection i.
func connBody(i, k int) []byte { return fmt.Appendf(nil, "connection %d message %d", i, k) }

// forEach runs fn(0)…fn(n-1) with at most parallel at once and returns
// their errors, labelled with i.
func forEach(n, parallel int, fn func(i int) error) []error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, parallel)
	)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(i); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("connection %d: %w", i, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// failOn fails tb with the number of errors and the first few.
func failOn(tb testing.TB, what string, errs []error) {
	tb.Helper()
	if len(errs) == 0 {
		return
	}
	tb.Fatalf("%s: %d errors, the first: %v", what, len(errs), errors.Join(errs[:min(len(errs), 5)]...))
}

// TestConnections100 runs 100 concurrent connections, each with a sender
// and a receiver exchanging 3 messages, without an error, and checks the
// listener's memory and goroutines.
func TestConnections100(t *testing.T) {
	runConnections(t, 100, 3)
}

// TestConnections1000 is TestConnections100 with 1,000 connections; it runs
// with PEEKLOCK_BIG=1.
func TestConnections1000(t *testing.T) {
	if os.Getenv("PEEKLOCK_BIG") != "1" {
		t.Skip("set PEEKLOCK_BIG=1 to open 1,000 connections")
	}
	runConnections(t, 1000, 3)
}

// BenchmarkConnections1000 opens 1,000 concurrent connections per
// operation, as TestConnections1000 does, and reports the listener's heap
// and resident memory per open connection.
func BenchmarkConnections1000(b *testing.B) {
	var rep connReport
	for range b.N {
		rep = runConnections(b, 1000, 3)
	}
	b.ReportMetric(rep.heapPerConn(), "heap-B/conn")
	b.ReportMetric(rep.rssPerConn(), "rss-B/conn")
}
