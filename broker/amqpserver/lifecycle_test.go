package amqpserver

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	amqp "github.com/Azure/go-amqp"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

func TestNewRefusesBadOptions(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New without an engine succeeded")
	}
	for name, o := range map[string]Options{
		"tiny frames":   {MaxFrameSize: 100},
		"empty key":     {Keys: map[string]string{"k": ""}},
		"negative max":  {MaxConnections: -1},
		"many sessions": {MaxSessionsPerConnection: 1 << 17},
		"sub-ms idle":   {IdleTimeout: time.Microsecond},
	} {
		if _, err := New(eng, o); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestServeAfterCloseAndListenAndServe(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := New(eng, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Addr() != nil {
		t.Fatal("an address before serving")
	}
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe("127.0.0.1:0") }()
	waitFor(t, 5*time.Second, "the listener", func() bool { return srv.Addr() != nil })
	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	waitFor(t, 5*time.Second, "the connection", func() bool { return srv.Connections() == 1 })
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != ErrServerClosed {
		t.Fatalf("ListenAndServe returned %v", err)
	}
	if srv.Connections() != 0 {
		t.Fatal("connections left after Close")
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	if err := srv.Serve(l); err != ErrServerClosed {
		t.Fatalf("Serve after Close returned %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCleanCloseReleasesLocks checks that a connection closed cleanly
// gives back its session locks and keeps its message locks.
func TestCleanCloseKeepsMessageLocks(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.queue("q", broker.EntitySettings{LockDuration: time.Hour})
	env.queue("s", broker.EntitySettings{LockDuration: time.Hour, RequiresSession: true})
	ctx := testCtx(t, 20*time.Second)
	if err := env.eng.Send(ctx, "q", []*broker.Message{{Body: []byte("m")}}); err != nil {
		t.Fatal(err)
	}
	if err := env.eng.Send(ctx, "s", []*broker.Message{{Body: []byte("m"), SessionID: "one"}}); err != nil {
		t.Fatal(err)
	}
	conn := env.dialAMQP(nil, 0)
	sess, _ := conn.NewSession(ctx, nil)
	rcv, err := sess.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: 1, SettlementMode: amqp.ReceiverSettleModeSecond.Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rcv.Receive(ctx, nil); err != nil {
		t.Fatal(err)
	}
	srcv, err := sess.NewReceiver(ctx, "s", &amqp.ReceiverOptions{Credit: 1, SettlementMode: amqp.ReceiverSettleModeSecond.Ptr(),
		Filters: []amqp.LinkFilter{amqp.NewLinkFilter(string(sessionFilterName), sbamqp.SessionFilterCode, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := srcv.LinkSourceFilterValue(string(sessionFilterName)); got != "one" {
		t.Fatalf("session filter answer %v", got)
	}
	if ticks, ok := srcv.Properties()[string(propLockedUntilUTC)].(int64); !ok || ticks < sbamqp.DotNetEpochTicks {
		t.Fatalf("locked-until-utc %v", srcv.Properties()[string(propLockedUntilUTC)])
	}
	if _, err := srcv.Receive(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	// The session lock goes back, and the session's message lock with it;
	// the plain message lock outlives its connection (backup settlement).
	waitFor(t, 5*time.Second, "the session lock to be released", func() bool {
		return env.counts("s").Locked == 0 && env.srv.Connections() == 0
	})
	if _, err := env.eng.AcceptSession(ctx, 0, "s", "one", 0); err != nil {
		t.Fatalf("the session is still locked: %v", err)
	}
	settleLeftLock(t, env, "q")
}

// settleLeftLock completes the one message lock left on entity by a
// connection that went away, by its lock token, as a client's backup
// settlement does from a new connection.
func settleLeftLock(t *testing.T, env *testEnv, entity string) {
	t.Helper()
	ctx := testCtx(t, 5*time.Second)
	locked, err := env.eng.Browse(ctx, broker.BrowseRequest{Entity: entity, Category: broker.CategoryLocked, Max: 10})
	if err != nil || len(locked) != 1 {
		t.Fatalf("locks left on %s: %v, %v; want the one lock", entity, locked, err)
	}
	if err := env.eng.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: entity, Token: locked[0].LockToken}); err != nil {
		t.Fatalf("settle the left lock by token: %v", err)
	}
}

// TestDeferredLockLostOnManagement settles a deferred message after its
// lock expired: the management link answers 410, which the SDK reports as
// lock lost.
func TestDeferredLockLostOnManagement(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	env := newEnv(t, engine.Options{Clock: clock}, Options{IdleTimeout: -1})
	env.queue("q", broker.EntitySettings{LockDuration: 10 * time.Second})
	ctx := testCtx(t, 20*time.Second)
	if err := env.eng.Send(ctx, "q", []*broker.Message{{Body: []byte("m")}}); err != nil {
		t.Fatal(err)
	}
	c := env.client()
	rcv, _ := c.NewReceiverForQueue("q", nil)
	m := receiveN(t, rcv, 1)[0]
	if err := rcv.DeferMessage(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	def, err := rcv.ReceiveDeferredMessages(ctx, []int64{*m.SequenceNumber}, nil)
	if err != nil || len(def) != 1 {
		t.Fatalf("%v %v", def, err)
	}
	clock.Advance(11 * time.Second)
	env.eng.Tick()
	if err := rcv.CompleteMessage(ctx, def[0], nil); sbCode(err) != azservicebus.CodeLockLost {
		t.Fatalf("complete of an expired deferred lock: %v", err)
	}
	if err := rcv.DeadLetterMessage(ctx, def[0], nil); sbCode(err) != azservicebus.CodeLockLost {
		t.Fatalf("dead-letter of an expired deferred lock: %v", err)
	}
	again, err := rcv.ReceiveDeferredMessages(context.Background(), []int64{*m.SequenceNumber}, nil)
	// The deferral and the expiry counted: the SDK shows 2+1.
	if err != nil || len(again) != 1 || again[0].DeliveryCount != 3 {
		t.Fatalf("deferred again: %v %v", again, err)
	}
	if err := rcv.DeadLetterMessage(ctx, again[0], &azservicebus.DeadLetterOptions{Reason: ptr("late")}); err != nil {
		t.Fatal(err)
	}
	if n := env.counts("q"); n.DeadLettered != 1 || n.Deferred != 0 {
		t.Fatalf("counts %+v", n)
	}
}
