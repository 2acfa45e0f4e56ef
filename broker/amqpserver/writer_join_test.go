package amqpserver

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// writeRecorder is a connection that is not a TCP socket and records each
// Write.
type writeRecorder struct {
	net.Conn // nil: only Write and the deadline are used
	mu       sync.Mutex
	writes   [][]byte
}

func (r *writeRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func (r *writeRecorder) SetWriteDeadline(time.Time) error { return nil }

// TestWriterJoinsBatchesOnWrappedConnections: on a connection without
// vectored writes (TLS, WebSockets) a batch of small frames goes out in one
// Write, so one TLS record or WebSocket message, and a big buffer on its
// own without a copy.
func TestWriterJoinsBatchesOnWrappedConnections(t *testing.T) {
	rec := &writeRecorder{}
	w := newWriter(rec, clockwork.NewRealClock(), time.Second)
	if !w.join {
		t.Fatal("a wrapped connection is not joined")
	}
	big := bytes.Repeat([]byte{'B'}, joinChunk)
	bufs := net.Buffers{[]byte("one"), []byte("two"), []byte("three"), big, []byte("four")}
	if !w.writeBuffers(bufs) {
		t.Fatal("writeBuffers failed")
	}
	want := [][]byte{[]byte("onetwothree"), big, []byte("four")}
	if len(rec.writes) != len(want) {
		t.Fatalf("%d writes, want %d", len(rec.writes), len(want))
	}
	for i := range want {
		if !bytes.Equal(rec.writes[i], want[i]) {
			t.Errorf("write %d: %d bytes %.20q, want %d bytes %.20q", i, len(rec.writes[i]), rec.writes[i], len(want[i]), want[i])
		}
	}
	// Chunks stay bounded: many frames that add up to more than joinChunk
	// are split.
	rec.writes = nil
	frame := bytes.Repeat([]byte{'f'}, joinChunk/3+1)
	if !w.writeBuffers(net.Buffers{frame, frame, frame, frame}) {
		t.Fatal("writeBuffers failed")
	}
	total := 0
	for _, b := range rec.writes {
		if len(b) > joinChunk {
			t.Errorf("a write of %d bytes, more than %d", len(b), joinChunk)
		}
		total += len(b)
	}
	if total != 4*len(frame) || len(rec.writes) != 2 {
		t.Errorf("%d writes of %d bytes in all, want 2 of %d", len(rec.writes), total, 4*len(frame))
	}

	tcp, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	c, err := net.DialTCP("tcp", nil, tcp.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if newWriter(c, clockwork.NewRealClock(), time.Second).join {
		t.Error("a TCP socket is joined; it has vectored writes")
	}
}
