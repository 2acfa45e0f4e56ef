package amqpserver

import (
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// TestRawSlowReaderDoesNotStallSettlements: a peer
// that stops reading while one of its receiver links has credit for far
// more than the socket buffers hold must not stop the listener from
// reading its other frames. Here the peer settles the deliveries of
// another link on the same session after it stopped reading; the engine
// must see those completes although nothing the listener writes reaches
// the peer any more.
func TestRawSlowReaderDoesNotStallSettlements(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{AllowAnonymous: true})
	env.queue("q", broker.EntitySettings{})
	env.queue("big", broker.EntitySettings{})
	ctx := testCtx(t, time.Minute)

	const settled = 10
	// Far more than the socket buffers and any write queue hold.
	const bigCount, bigSize = 600, 60 << 10
	small := make([]*broker.Message, settled)
	for i := range small {
		small[i] = &broker.Message{Body: []byte("settle me")}
	}
	if err := env.eng.Send(ctx, "q", small); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < bigCount; i += 50 {
		batch := make([]*broker.Message, 50)
		for k := range batch {
			batch[k] = &broker.Message{Body: make([]byte, bigSize)}
		}
		if err := env.eng.Send(ctx, "big", batch); err != nil {
			t.Fatal(err)
		}
	}

	c := env.raw()
	c.open(&wire.Open{ContainerID: "raw"})
	c.frame(0, &wire.Begin{IncomingWindow: 1 << 20, OutgoingWindow: 100})
	if _, ok := c.read().Body.(*wire.Begin); !ok {
		t.Fatal("want begin")
	}
	c.attachReceiver(0, "q", settled)
	ids := make([]uint32, 0, settled)
	for len(ids) < settled {
		if tr, ok := c.read().Body.(*wire.Transfer); ok && tr.Handle == 0 {
			ids = append(ids, tr.DeliveryID.Value)
		}
	}

	// The second link gets credit for everything and the peer stops
	// reading: the listener's writes back up.
	c.attachReceiver(1, "big", bigCount)
	waitForPlateau(t, func() int64 { return env.counts("big").Locked })

	for _, id := range ids {
		c.frame(0, &wire.Disposition{Role: wire.RoleReceiver, First: id, Settled: true, State: wire.Accepted{}})
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := env.counts("q")
		if n.Active == 0 && n.Locked == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("settlements sent while another link's deliveries back up did not reach the engine: %+v", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// attachReceiver attaches a peek-lock receiver of addr with handle on
// channel 0, reads the listener's attach and gives credit.
func (c *rawClient) attachReceiver(handle uint32, addr string, credit uint32) {
	c.t.Helper()
	c.frame(0, &wire.Attach{Name: "r" + addr, Handle: handle, Role: wire.RoleReceiver, Source: &wire.Source{Address: addr}, Target: &wire.Target{Address: "me"}})
	for {
		if a, ok := c.read().Body.(*wire.Attach); ok && a.Handle == handle {
			break
		}
	}
	c.frame(0, &wire.Flow{
		NextIncomingID: wire.Some[uint32](0),
		IncomingWindow: 1 << 20,
		OutgoingWindow: 100,
		Handle:         wire.Some(handle),
		DeliveryCount:  wire.Some[uint32](0),
		LinkCredit:     wire.Some(credit),
	})
}

// waitForPlateau waits until value is positive and has not changed for a
// few polls: the listener took what it could and waits on the peer. A
// plateau seen too early only makes the test weaker, never flaky.
func waitForPlateau(t *testing.T, value func() int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last, same := int64(-1), 0
	for same < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("the value never settled (last %d)", last)
		}
		time.Sleep(100 * time.Millisecond)
		v := value()
		if v > 0 && v == last {
			same++
		} else {
			same = 0
		}
		last = v
	}
}
