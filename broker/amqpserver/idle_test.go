package amqpserver

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/engine"
)

// readRawFrame reads one frame, empty or not, within d; ok is false on a
// timeout.
func (c *rawClient) readRawFrame(d time.Duration) (wire.FrameHeader, bool) {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	var h [8]byte
	if _, err := ioReadFull(c.nc, h[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return wire.FrameHeader{}, false
		}
		c.t.Fatalf("read: %v", err)
	}
	fh, err := wire.ParseFrameHeader(h[:])
	if err != nil {
		c.t.Fatal(err)
	}
	rest := make([]byte, fh.Size-8)
	if _, err := ioReadFull(c.nc, rest); err != nil {
		c.t.Fatal(err)
	}
	return fh, true
}

func ioReadFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := c.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func TestHeartbeatsAtHalfThePeersIdleTimeout(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	env := newEnv(t, engine.Options{Clock: clock}, Options{AllowAnonymous: true, IdleTimeout: time.Minute})
	c := env.raw()
	c.open(&wire.Open{ContainerID: "raw", IdleTimeout: 4000})
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("no heartbeat")
		}
		clock.Advance(time.Second)
		if fh, ok := c.readRawFrame(50 * time.Millisecond); ok {
			if fh.Size != wire.FrameHeaderSize {
				t.Fatalf("a frame of %d bytes, want an empty one", fh.Size)
			}
			if i < 1 {
				t.Fatalf("heartbeat after %d s, want 2 s (half of 4 s)", i+1)
			}
			return
		}
	}
}

func TestIdlePeerIsClosed(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	env := newEnv(t, engine.Options{Clock: clock}, Options{AllowAnonymous: true, IdleTimeout: 10 * time.Second})
	c := env.raw()
	o := c.open(&wire.Open{ContainerID: "raw"})
	if o.IdleTimeout != 10000 {
		t.Fatalf("announced idle timeout %d ms", o.IdleTimeout)
	}
	// Frames from the peer keep it open.
	for range 4 {
		clock.Advance(4 * time.Second)
		c.write(wire.AppendEmptyFrame(nil))
		time.Sleep(10 * time.Millisecond)
	}
	if env.srv.Connections() != 1 {
		t.Fatal("a talking peer was dropped")
	}
	for i := 0; ; i++ {
		if i == 30 {
			t.Fatal("a silent peer was not closed")
		}
		clock.Advance(time.Second)
		_ = c.nc.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
		var h [8]byte
		if _, err := ioReadFull(c.nc, h[:]); err != nil {
			continue
		}
		size := binary.BigEndian.Uint32(h[:])
		body := make([]byte, size-8)
		_ = c.nc.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := ioReadFull(c.nc, body); err != nil {
			t.Fatal(err)
		}
		fr, _, err := wire.DecodeFrame(append(h[:], body...))
		if err != nil {
			t.Fatal(err)
		}
		cl, ok := fr.Body.(*wire.Close)
		if !ok || cl.Error == nil || cl.Error.Condition != wire.CondResourceLimitExceeded {
			t.Fatalf("want close with %s, got %+v", wire.CondResourceLimitExceeded, fr.Body)
		}
		if i < 9 {
			t.Fatalf("closed after %d s of silence, want more than 10 s", i+1)
		}
		c.expectEOF()
		return
	}
}
