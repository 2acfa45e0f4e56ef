package amqpserver

import (
	"net"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// TestDispositionRunRanges: consecutive outcomes that agree go in one
// frame with a range; a different outcome, a gap, a different settled flag
// or a wrap-around start a new frame, in order.
func TestDispositionRunRanges(t *testing.T) {
	ours, peer := net.Pipe()
	defer ours.Close()
	defer peer.Close()
	w := newWriter(ours, clockwork.NewRealClock(), time.Minute)
	go w.run()
	defer w.shutdown()
	s := &session{c: &conn{w: w}}
	rej := wire.Rejected{Error: &wire.Error{Condition: wire.CondInternalError}}
	run := s.newDispositionRun(wire.RoleSender)
	for _, o := range []struct {
		id      uint32
		settled bool
		state   wire.DeliveryState
	}{
		{1, true, wire.Accepted{}}, {2, true, wire.Accepted{}}, {3, true, wire.Accepted{}},
		{4, true, rej}, {5, true, rej},
		{6, true, wire.Accepted{}}, {8, true, wire.Accepted{}},
		{9, false, wire.Accepted{}},
		{10, true, wire.Released{}}, {11, true, wire.Released{}},
		{1<<32 - 1, true, wire.Accepted{}}, {0, true, wire.Accepted{}},
	} {
		run.addLocked(o.id, o.settled, o.state)
	}
	run.flushLocked()
	type want struct {
		first, last uint32
		settled     bool
		state       string
	}
	wants := []want{{1, 3, true, "accepted"}, {4, 4, true, "rejected"}, {5, 5, true, "rejected"},
		{6, 6, true, "accepted"}, {8, 8, true, "accepted"}, {9, 9, false, "accepted"},
		{10, 11, true, "released"}, {1<<32 - 1, 1<<32 - 1, true, "accepted"}, {0, 0, true, "accepted"}}
	r := wire.NewFrameReader(peer, 1<<20)
	for i, wt := range wants {
		_ = peer.SetReadDeadline(time.Now().Add(5 * time.Second))
		fr, err := r.ReadFrame()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		d, ok := fr.Body.(*wire.Disposition)
		if !ok {
			t.Fatalf("frame %d: %T", i, fr.Body)
		}
		last := d.First
		if v, ok := d.Last.Get(); ok {
			last = v
		}
		got := want{d.First, last, d.Settled, stateName(d.State)}
		if got != wt || d.Role != wire.RoleSender {
			t.Fatalf("frame %d: %+v (role %v), want %+v", i, got, d.Role, wt)
		}
	}
}

func stateName(s wire.DeliveryState) string {
	switch s.(type) {
	case wire.Accepted:
		return "accepted"
	case wire.Rejected:
		return "rejected"
	case wire.Released:
		return "released"
	}
	return "other"
}

// TestRawPipelinedSendsAnsweredOnce: deliveries sent in one burst are each
// answered exactly once, with their own outcome, whether the listener
// answers them one by one or in ranges; a delivery that is not a message
// is rejected between accepted ones.
func TestRawPipelinedSendsAnsweredOnce(t *testing.T) {
	env := anonymousEnv(t)
	c := env.raw()
	c.open(&wire.Open{ContainerID: "raw"})
	c.begin(0)
	c.attachSender(0, "q")
	const n, bad = 40, 17
	payload := wire.EncodeMessage(nil, &broker.Message{Body: []byte("hi")}, wire.EncodeOptions{})
	var burst []byte
	for id := uint32(0); id < n; id++ {
		p := payload
		if id == bad {
			p = []byte{0xff}
		}
		b, err := wire.AppendFrame(nil, wire.FrameAMQP, 0, &wire.Transfer{Handle: 0, DeliveryID: wire.Some(id), DeliveryTag: []byte{byte(id)}, MessageFormat: wire.Some[uint32](0), Payload: p})
		if err != nil {
			t.Fatal(err)
		}
		burst = append(burst, b...)
	}
	c.write(burst)
	seen := map[uint32]string{}
	for len(seen) < n {
		d, ok := c.read().Body.(*wire.Disposition)
		if !ok {
			continue
		}
		last := d.First
		if v, ok := d.Last.Get(); ok {
			last = v
		}
		if !d.Settled || d.Role != wire.RoleReceiver || last < d.First || last >= n {
			t.Fatalf("disposition %+v", d)
		}
		for id := d.First; id <= last; id++ {
			if _, dup := seen[id]; dup {
				t.Fatalf("delivery %d answered twice", id)
			}
			seen[id] = stateName(d.State)
		}
	}
	for id := uint32(0); id < n; id++ {
		want := "accepted"
		if id == bad {
			want = "rejected"
		}
		if seen[id] != want {
			t.Errorf("delivery %d: %s, want %s", id, seen[id], want)
		}
	}
	if got := env.counts("q").Active; got != n-1 {
		t.Fatalf("%d stored, want %d", got, n-1)
	}
}
