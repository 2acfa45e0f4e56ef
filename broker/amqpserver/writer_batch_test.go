package amqpserver

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// writeRecorder is a connection that records each Write.
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

// TestWriterWritesABatchAtOnce: the frames queued before the writer runs
// go out in one write, in order (one system call on a socket; here, a
// wrapped connection, a Write per chunk: the small frames share one), and
// the budgets they took are given back.
func TestWriterWritesABatchAtOnce(t *testing.T) {
	rec := &writeRecorder{}
	w := newWriter(rec, clockwork.NewRealClock(), time.Second)
	big := bytes.Repeat([]byte{'B'}, 16<<10)
	for _, b := range [][]byte{[]byte("one"), []byte("two"), big, []byte("three")} {
		if !w.send(b) {
			t.Fatal("send refused")
		}
	}
	if ok, err := w.sendFrame(3, &wire.Flow{IncomingWindow: 7}); !ok || err != nil {
		t.Fatalf("sendFrame: %v, %v", ok, err)
	}
	want := append([]byte("onetwo"), big...)
	want = append(want, "three"...)
	want, _ = wire.AppendFrame(want, wire.FrameAMQP, 3, &wire.Flow{IncomingWindow: 7})
	if !w.flush() {
		t.Fatal("flush failed")
	}
	if got := bytes.Join(rec.writes, nil); !bytes.Equal(got, want) {
		t.Fatalf("wrote %d bytes, want %d", len(got), len(want))
	}
	if len(rec.writes) != 1 {
		t.Errorf("%d writes, want 1: the frames fit one chunk", len(rec.writes))
	}
	if w.controlBytes != 0 || w.deliveryBytes != 0 {
		t.Errorf("after the write %d control and %d delivery bytes are still counted", w.controlBytes, w.deliveryBytes)
	}
	if w.bufs != nil || len(w.spare) != 0 || cap(w.spare) == 0 {
		t.Error("the written batch's list is not kept, empty, for the next one")
	}
}
