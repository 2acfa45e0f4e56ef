package amqpserver

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
)

// recorder keeps a copy of everything a client writes.
type recorder struct {
	net.Conn
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.buf.Write(p)
	r.mu.Unlock()
	return r.Conn.Write(p)
}

func (r *recorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

// recordSession records the bytes go-amqp writes for a whole session: SASL
// PLAIN, open, begin, a sender that sends a small and a multi-frame
// message, detach, end, close.
func recordSession(t *testing.T, env *testEnv) []byte {
	ctx := testCtx(t, 10*time.Second)
	var rec *recorder
	conn := env.dialAMQP(func(c net.Conn) net.Conn { rec = &recorder{Conn: c}; return rec }, 512)
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{[]byte("small"), bytes.Repeat([]byte("big."), 300)} {
		if err := snd.Send(ctx, amqp.NewMessage(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := snd.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	return rec.bytes()
}

// TestSplitAtEveryOffset replays a recorded session split in two writes at
// every byte offset (over a pipe, so the listener reads exactly those two
// pieces) and checks that each replay stores both messages.
func TestSplitAtEveryOffset(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.queue("q", broker.EntitySettings{})
	rec := recordSession(t, env)
	ctx := context.Background()
	if _, err := env.eng.Purge(ctx, "q", broker.SubQueueMain); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the recording connection to end", func() bool { return env.srv.Connections() == 0 })
	step := 1
	if testing.Short() {
		step = 13
	}
	for k := 1; k < len(rec); k += step {
		client, server := net.Pipe()
		env.srv.ServeConn(server)
		drained := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, client)
			close(drained)
		}()
		if _, err := client.Write(rec[:k]); err != nil {
			t.Fatalf("offset %d: first write: %v", k, err)
		}
		if _, err := client.Write(rec[k:]); err != nil {
			t.Fatalf("offset %d: second write: %v", k, err)
		}
		select {
		case <-drained:
		case <-time.After(5 * time.Second):
			t.Fatalf("offset %d: the listener did not close the connection", k)
		}
		_ = client.Close()
		waitFor(t, 5*time.Second, "the connection to end", func() bool { return env.srv.Connections() == 0 })
		if got := env.activeBodies("q"); len(got) != 2 || got[0] != "small" || len(got[1]) != 1200 {
			t.Fatalf("offset %d of %d: stored %d messages", k, len(rec), len(got))
		}
		if _, err := env.eng.Purge(ctx, "q", broker.SubQueueMain); err != nil {
			t.Fatal(err)
		}
	}
}
