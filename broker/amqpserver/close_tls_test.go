package amqpserver

import (
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// lingeringTLS is a client's TLS connection whose Close sends its
// close_notify, then lets the client's reader read on until what the peer
// sent after the client's last write has arrived, and only then closes the
// socket: a client preempted between the two steps of tls.Conn.Close,
// which go-amqp's Conn.Close calls right after writing its close frame.
type lingeringTLS struct {
	*tls.Conn
	writes    atomic.Int64 // writes begun
	readAfter atomic.Int64 // writes begun before the last read returned
}

func (l *lingeringTLS) Write(p []byte) (int, error) {
	l.writes.Add(1)
	return l.Conn.Write(p)
}

func (l *lingeringTLS) Read(p []byte) (int, error) {
	n, err := l.Conn.Read(p)
	l.readAfter.Store(l.writes.Load())
	return n, err
}

func (l *lingeringTLS) Close() error {
	_ = l.Conn.CloseWrite()
	deadline := time.Now().Add(5 * time.Second)
	for l.readAfter.Load() < l.writes.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return l.Conn.Close()
}

// TestCloseOverTLSWithALingeringClient: a client that closes its TLS
// connection slowly still reads the listener's close frame before the
// listener's own close_notify, so its Close reports a clean close. (A
// TLS-terminating pipe that closes both sides when the client's side ends,
// like the one in the shared SDK suite's harness, makes this client's
// Close return EOF in every round.)
func TestCloseOverTLSWithALingeringClient(t *testing.T) {
	env := newFrontEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	for i := range 20 {
		raw, err := net.Dial("tcp", "127.0.0.1:"+env.port)
		if err != nil {
			t.Fatal(err)
		}
		nc := &lingeringTLS{Conn: tls.Client(raw, env.tlsConfig())}
		ctx := testCtx(t, 10*time.Second)
		c, err := amqp.NewConn(ctx, nc, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(DefaultKeyName, DefaultKey), HostName: "localhost"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: 10}); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("round %d: the client's Close: %v", i, err)
		}
	}
}
