package amqpserver

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// stalledWriter returns a writer on one end of a pipe whose other end is
// read only when the test says so.
func stalledWriter(t *testing.T) (*writer, net.Conn) {
	t.Helper()
	ours, peer := net.Pipe()
	w := newWriter(ours, clockwork.NewRealClock(), time.Minute)
	go w.run()
	t.Cleanup(func() {
		w.shutdown()
		_ = ours.Close()
		_ = peer.Close()
		<-w.done
	})
	return w, peer
}

// TestWriterQueuesWithoutWaiting: queuing never waits on a peer that does
// not read (it happens under session locks); deliveries beyond the budget
// make awaitRoom wait, with no lock held, until the peer reads.
func TestWriterQueuesWithoutWaiting(t *testing.T) {
	w, peer := stalledWriter(t)
	chunk := make([]byte, 64<<10)
	for n := 0; n <= deliveryBudget; n += len(chunk) {
		if ok, _ := w.encode(true, len(chunk), func(b []byte) ([]byte, error) { return append(b, chunk...), nil }); !ok {
			t.Fatal("a delivery was refused")
		}
	}
	if !w.send([]byte("control")) {
		t.Fatal("a control frame was refused")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if w.awaitRoom(ctx) {
		t.Fatal("room beyond the delivery budget")
	}
	got := make(chan bool, 1)
	go func() { got <- w.awaitRoom(context.Background()) }()
	go func() { _, _ = io.Copy(io.Discard, peer) }()
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("awaitRoom failed while the peer reads")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("awaitRoom still waits after the peer read")
	}
}

// TestWriterDropsPeerThatDoesNotRead: other frames are queued without a
// budget to wait on, so a peer that keeps them piling up past
// maxControlBacklog is disconnected.
func TestWriterDropsPeerThatDoesNotRead(t *testing.T) {
	w, peer := stalledWriter(t)
	frame := make([]byte, 1<<10)
	sent := 0
	for w.send(frame) {
		sent += len(frame)
		if sent > 2*maxControlBacklog {
			t.Fatal("a peer that never reads was never dropped")
		}
	}
	if sent < maxControlBacklog-64<<10 {
		t.Fatalf("dropped after %d bytes, below the backlog of %d", sent, maxControlBacklog)
	}
	if w.awaitRoom(context.Background()) {
		t.Fatal("room on a failed writer")
	}
	// The connection is closed: the peer's reads end.
	_ = peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, peer); err != nil {
		t.Fatalf("the dropped connection did not end cleanly: %v", err)
	}
}
