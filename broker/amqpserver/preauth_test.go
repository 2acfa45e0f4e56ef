package amqpserver

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

// saslAnonymous runs SASL ANONYMOUS and the open exchange: a connection
// that has not authenticated.
func (c *rawClient) saslAnonymous() {
	c.t.Helper()
	if h := c.header(wire.HeaderSASL); h != wire.HeaderSASL {
		c.t.Fatalf("header %+v", h)
	}
	if _, ok := c.read().Body.(*wire.SASLMechanisms); !ok {
		c.t.Fatal("want sasl-mechanisms")
	}
	b, _ := wire.AppendFrame(nil, wire.FrameSASL, 0, &wire.SASLInit{Mechanism: wire.MechanismAnonymous})
	c.write(b)
	if out, ok := c.read().Body.(*wire.SASLOutcome); !ok || out.Code != wire.SASLOK {
		c.t.Fatalf("outcome %+v", out)
	}
	c.open(&wire.Open{ContainerID: "raw"})
}

// unauthenticatedHello is what a peer that never authenticates sends at
// once: SASL ANONYMOUS, the AMQP header and an open.
func unauthenticatedHello(t *testing.T) []byte {
	t.Helper()
	b := wire.HeaderSASL.Append(nil)
	b, err := wire.AppendFrame(b, wire.FrameSASL, 0, &wire.SASLInit{Mechanism: wire.MechanismAnonymous})
	if err != nil {
		t.Fatal(err)
	}
	b = wire.HeaderAMQP.Append(b)
	b, err = wire.AppendFrame(b, wire.FrameAMQP, 0, &wire.Open{ContainerID: "idle", IdleTimeout: 60000})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reachListener dials addr and sends hello until the listener answers with
// its protocol header. The port's front sorts connections before the
// listener takes them, and in a burst on a busy machine it closes one it
// has not read yet to make room for another (front.Options.MaxPending): a
// client dials again then, as this does (up to 20 times).
func reachListener(addr string, hello []byte) (net.Conn, error) {
	var err error
	for range 20 {
		var nc net.Conn
		if nc, err = net.Dial("tcp", addr); err != nil {
			return nil, err
		}
		_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err = nc.Write(hello); err == nil {
			_, err = io.ReadFull(nc, make([]byte, 8))
		}
		if err == nil {
			_ = nc.SetReadDeadline(time.Time{})
			return nc, nil
		}
		_ = nc.Close()
	}
	return nil, fmt.Errorf("the listener never answered: %w", err)
}

// accepted returns how many connections the server has taken.
func (s *Server) accepted() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// TestUnauthenticatedFloodLeavesRoomForClients fills every connection slot
// with peers that never authenticate and keep their connections alive with
// heartbeats, as an outside test did; an SDK client must still connect,
// send and receive, and the peers hold at most MaxUnauthenticated slots.
func TestUnauthenticatedFloodLeavesRoomForClients(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 connections")
	}
	const flood = 1000
	env := newEnv(t, engineOpts(), Options{MaxConnections: flood})
	env.queue("q", broker.EntitySettings{})
	hello := unauthenticatedHello(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(stop); wg.Wait() })
	dials := make(chan struct{})
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range dials {
				nc, err := reachListener(env.addr, hello)
				if err != nil {
					t.Error(err)
					return
				}
				wg.Add(1)
				go func() { // a heartbeat every second until the listener closes it
					defer wg.Done()
					defer nc.Close()
					tick := time.NewTicker(time.Second)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
							if _, err := nc.Write(wire.AppendEmptyFrame(nil)); err != nil {
								return
							}
						}
					}
				}()
			}
		}()
	}
	for range flood {
		dials <- struct{}{}
	}
	close(dials)
	waitFor(t, 60*time.Second, "the listener to take every connection", func() bool { return env.srv.accepted() >= flood })
	if n := env.srv.Unauthenticated(); n > DefaultMaxUnauthenticated {
		t.Fatalf("%d unauthenticated connections open, want at most %d", n, DefaultMaxUnauthenticated)
	}

	ctx := testCtx(t, 60*time.Second)
	c := env.client()
	snd, err := c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("through")}, nil); err != nil {
		t.Fatalf("send beside %d unauthenticated peers: %v", flood, err)
	}
	rcv, err := c.NewReceiverForQueue("q", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "through" {
		t.Fatalf("receive: %v %v", msgs, err)
	}
	// The connections closed for the newcomers go within closeGrace.
	waitFor(t, 2*closeGrace, "the closed connections to go", func() bool { return env.srv.Connections() <= DefaultMaxUnauthenticated+1 })
}

// TestAuthDeadline closes a connection that has not authenticated within
// the AuthTimeout; one that authenticated with SASL PLAIN or a $cbs token
// stays.
func TestAuthDeadline(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	env := newEnv(t, engine.Options{Clock: clock}, Options{IdleTimeout: -1, AuthTimeout: 10 * time.Second})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 20*time.Second)

	silent := env.raw()
	silent.saslAnonymous()
	plain := env.dialAMQP(nil, 0)
	tokenSession := env.anonymousSession()
	cbs := newRPC(t, tokenSession, "$cbs")
	if code, desc := putToken(cbs, aud(env, "q"), sasToken(env, "q", clock.Now().Add(time.Hour))); code != 202 {
		t.Fatalf("put-token: %d %s", code, desc)
	}
	waitFor(t, 5*time.Second, "the two authenticated connections", func() bool { return env.srv.Unauthenticated() == 1 })

	clock.Advance(10 * time.Second)
	e := silent.expectClose()
	if e == nil || e.Condition != wire.CondUnauthorizedAccess {
		t.Fatalf("close error %+v, want %s", e, wire.CondUnauthorizedAccess)
	}
	if _, err := tokenSession.NewSender(ctx, "q", nil); err != nil {
		t.Fatalf("the connection with a token after the deadline: %v", err)
	}
	s, err := plain.NewSession(ctx, nil)
	if err != nil {
		t.Fatalf("the PLAIN connection after the deadline: %v", err)
	}
	if _, err := s.NewSender(ctx, "q", nil); err != nil {
		t.Fatal(err)
	}
}

// TestPreAuthOnlyCBS: before it authenticates, a connection may attach
// the $cbs pair and nothing else, not even $management.
func TestPreAuthOnlyCBS(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.queue("q", broker.EntitySettings{})
	c := env.raw()
	c.saslAnonymous()
	c.begin(0)
	for i, addr := range []string{"q", "q/$management", "nope"} {
		a, _ := c.attachSender(uint32(i), addr)
		if a.Target != nil {
			t.Fatalf("a link to %s attached before authentication", addr)
		}
		d, ok := c.read().Body.(*wire.Detach)
		if !ok || d.Error == nil || d.Error.Condition != wire.CondUnauthorizedAccess {
			t.Fatalf("detach %+v, want %s", d, wire.CondUnauthorizedAccess)
		}
	}
	if a, _ := c.attachSender(3, "$cbs"); a.Target == nil {
		t.Fatal("the $cbs sender was refused")
	}
}

// TestPreAuthLinkFlood attaches links as fast as it can on connections that
// never authenticate, never reading the answers (a $cbs link beyond the
// first pair is refused, but the refusal holds the link until the peer
// detaches it): each connection is closed after a few links, and the
// listener's memory does not grow with the flood.
func TestPreAuthLinkFlood(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	const conns, sessions = 4, 16
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for range conns {
		c := env.raw()
		c.saslAnonymous()
		var flood []byte
		for ch := range uint16(sessions) {
			flood, _ = wire.AppendFrame(flood, wire.FrameAMQP, ch, &wire.Begin{IncomingWindow: 100, OutgoingWindow: 100, HandleMax: wire.Some[uint32](1 << 16)})
			for h := range uint32(DefaultMaxLinksPerSession) {
				flood, _ = wire.AppendFrame(flood, wire.FrameAMQP, ch, &wire.Attach{Name: "flood", Handle: h, Role: wire.RoleSender,
					Source: &wire.Source{Address: "me"}, Target: &wire.Target{Address: "$cbs"}})
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.nc.Write(flood) // fails once the listener closes the connection
		}()
	}
	waitFor(t, 30*time.Second, "the flood to be written or refused", func() bool {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return true
		case <-time.After(10 * time.Millisecond):
			return false
		}
	})
	held := 0
	waitFor(t, 30*time.Second, "the listener to read the flood", func() bool {
		held = env.srv.heldLinks()
		return env.srv.Connections() == 0 || held >= conns*sessions*DefaultMaxLinksPerSession
	})
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("links held %d, heap grown by %d KiB", held, grown>>10)
	if held > conns*preAuthMaxLinks {
		t.Fatalf("%d links held by %d unauthenticated connections", held, conns)
	}
	if grown > 8<<20 {
		t.Fatalf("the heap grew by %d MiB", grown>>20)
	}
}

// heldLinks returns the links of every open connection.
func (s *Server) heldLinks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		n += int(c.links.Load())
	}
	return n
}

// TestPreAuthSessionCap closes an unauthenticated connection that begins
// more sessions than it needs to authenticate.
func TestPreAuthSessionCap(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	c := env.raw()
	c.saslAnonymous()
	for ch := range uint16(preAuthMaxSessions) {
		c.begin(ch)
	}
	c.frame(preAuthMaxSessions, &wire.Begin{IncomingWindow: 100, OutgoingWindow: 100})
	if e := c.expectClose(); e == nil || e.Condition != wire.CondResourceLimitExceeded {
		t.Fatalf("close error %+v", e)
	}
}

// TestUnauthenticatedCapClosesTheOldest: beyond MaxUnauthenticated, the
// oldest unauthenticated connection is closed, not the newcomer, and an
// authenticated connection is never counted.
func TestUnauthenticatedCapClosesTheOldest(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{MaxUnauthenticated: 2})
	_ = env.dialAMQP(nil, 0) // PLAIN: authenticated
	first := env.raw()
	first.saslAnonymous()
	second := env.raw()
	second.saslAnonymous()
	third := env.raw()
	third.saslAnonymous()
	if e := first.expectClose(); e == nil || e.Condition != wire.CondResourceLimitExceeded {
		t.Fatalf("close error %+v", e)
	}
	third.begin(0)
	second.begin(0)
	waitFor(t, 5*time.Second, "the count", func() bool { return env.srv.Connections() == 3 && env.srv.Unauthenticated() == 2 })
}

func sasToken(env *testEnv, path string, until time.Time) string {
	return sas.Sign(aud(env, path), DefaultKeyName, DefaultKey, until)
}
