package remote

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
)

// sessionMessages builds messages of sessions, one per id given, in order.
func sessionMessages(ids ...string) []*broker.Message {
	out := textMessages(len(ids))
	for i, id := range ids {
		out[i].SessionID = id
	}
	return out
}

// sessionLocked reports whether the engine shows session sid of entity as
// locked.
func sessionLocked(t *testing.T, env *serveEnv, entity, sid string) bool {
	t.Helper()
	infos, err := env.eng.Sessions(context.Background(), entity)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.SessionID == sid {
			return in.Locked
		}
	}
	return false
}

// sessionServe starts a listener on a fake clock at the current second with
// session-aware queue "sq" (lock duration 30 s), and returns the clock, the
// listener and a client configuration on that clock.
func sessionServe(t *testing.T) (*clockwork.FakeClock, *serveEnv, Config) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(time.Now().Truncate(time.Second))
	env := newServe(t, clock)
	env.queue("sq", broker.EntitySettings{RequiresSession: true, LockDuration: 30 * time.Second})
	cfg := env.config("")
	cfg.Clock = clock
	return clock, env, cfg
}
func TestServeSessions(t *testing.T) {
	clock, env, cfg := sessionServe(t)
	start := clock.Now()
	c := env.dial(cfg)
	c2 := env.dial(cfg)
	ctx := context.Background()

	sc, ok := broker.SessionsOf(c)
	if !ok {
		t.Fatalf("SessionsOf(remote Service Bus client) is not ok; capabilities %+v", c.Capabilities())
	}
	if err := c.Send(ctx, "sq", sessionMessages("a", "b", "a", "b", "a")); err != nil {
		t.Fatal(err)
	}
	// Give session "a" a state, through the engine's own client.
	if _, err := env.eng.LockSession(ctx, "sq", "a", 0); err != nil {
		t.Fatal(err)
	}
	if err := env.eng.SetSessionState(ctx, 0, "sq", "a", []byte("state-a")); err != nil {
		t.Fatal(err)
	}
	if err := env.eng.UnlockSession(ctx, "sq", "a"); err != nil {
		t.Fatal(err)
	}

	// A named session.
	lock, err := sc.LockSession(ctx, "sq", "a", 0)
	if err != nil {
		t.Fatalf("LockSession(a): %v", err)
	}
	if lock.Entity != "sq" || lock.SessionID != "a" || lock.Token.IsZero() || !lock.LockedUntil.Equal(start.Add(30*time.Second)) {
		t.Fatalf("LockSession(a) = %+v; want entity sq, session a, a token, locked until %v", lock, start.Add(30*time.Second))
	}
	if !sessionLocked(t, env, "sq", "a") {
		t.Fatal("the listener does not show session a locked")
	}
	// Held here already, held elsewhere: refused.
	if _, err := sc.LockSession(ctx, "sq", "a", 0); !errors.Is(err, broker.ErrSessionCannotLock) {
		t.Fatalf("second LockSession(a) on the same client = %v, want ErrSessionCannotLock", err)
	}
	if _, err := c2.LockSession(ctx, "sq", "a", 0); !errors.Is(err, broker.ErrSessionCannotLock) {
		t.Fatalf("LockSession(a) by a second client = %v, want ErrSessionCannotLock", err)
	}

	// Its messages, in order, and nothing of session b.
	got, err := sc.ReceiveFromSession(ctx, "a", broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 5, MaxWait: time.Second})
	if err != nil || !reflect.DeepEqual(seqs(got), []int64{1, 3, 5}) {
		t.Fatalf("ReceiveFromSession(a) = %v, %v; want [1 3 5]", seqs(got), err)
	}
	for _, m := range got {
		if m.SessionID != "a" || m.LockToken.IsZero() {
			t.Fatalf("message %d: session %q, token %v; want session a with a lock token", m.SequenceNumber, m.SessionID, m.LockToken)
		}
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "sq", Token: got[0].LockToken}); err != nil {
		t.Fatalf("Complete of a session message: %v", err)
	}
	if held, err := c.Browse(ctx, broker.BrowseRequest{Entity: "sq", Category: broker.CategoryLocked, Max: 10}); err != nil || !reflect.DeepEqual(seqs(held), []int64{3, 5}) {
		t.Fatalf("Locked = %v, %v; want [3 5]", seqs(held), err)
	}

	// Renewal: the listener's clock plus the lock duration, exactly.
	clock.Advance(10 * time.Second)
	until, err := sc.RenewSession(ctx, "sq", "a")
	if want := start.Add(40 * time.Second); err != nil || !until.Equal(want) {
		t.Fatalf("RenewSession = %v, %v; want %v", until, err, want)
	}

	// State: read by the holder, refused to a client that holds no lock.
	if st, err := sc.SessionState(ctx, "sq", "a"); err != nil || string(st) != "state-a" {
		t.Fatalf("SessionState(a) by the holder = %q, %v; want state-a", st, err)
	}
	if _, err := c2.SessionState(ctx, "sq", "a"); !errors.Is(err, broker.ErrSessionLockLost) || !strings.Contains(err.Error(), "only to the holder") {
		t.Fatalf("SessionState(a) by another client = %v, want ErrSessionLockLost saying why", err)
	}

	// The next available session is b, the only unlocked one.
	lockB, err := c2.LockSession(ctx, "sq", "", time.Second)
	if err != nil || lockB.SessionID != "b" || !lockB.LockedUntil.Equal(start.Add(40*time.Second)) {
		t.Fatalf("LockSession(next) = %+v, %v; want session b locked until %v", lockB, err, start.Add(40*time.Second))
	}
	if st, err := c2.SessionState(ctx, "sq", "b"); err != nil || st != nil {
		t.Fatalf("SessionState(b) = %q, %v; want nil", st, err)
	}
	gotB, err := c2.ReceiveFromSession(ctx, "b", broker.ReceiveRequest{Entity: "sq", Mode: broker.ReceiveAndDelete, Max: 5, MaxWait: time.Second})
	if err != nil || !reflect.DeepEqual(seqs(gotB), []int64{2, 4}) || !gotB[0].LockToken.IsZero() {
		t.Fatalf("ReceiveFromSession(b, receive-and-delete) = %v, %v; want [2 4] without locks", seqs(gotB), err)
	}

	// Unlock: the message locks go with it; another client takes it.
	if err := sc.UnlockSession(ctx, "sq", "a"); err != nil {
		t.Fatalf("UnlockSession(a): %v", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "sq", Token: got[1].LockToken}); !errors.Is(err, broker.ErrLockLost) {
		t.Fatalf("settling a message of an unlocked session = %v, want ErrLockLost", err)
	}
	if _, err := sc.ReceiveFromSession(ctx, "a", broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 1}); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("ReceiveFromSession after unlock = %v, want ErrSessionLockLost", err)
	}
	if _, err := sc.RenewSession(ctx, "sq", "a"); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("RenewSession after unlock = %v, want ErrSessionLockLost", err)
	}
	waitFor(t, 5*time.Second, "the listener to release session a", func() bool { return !sessionLocked(t, env, "sq", "a") })
	if _, err := c2.LockSession(ctx, "sq", "a", 0); err != nil {
		t.Fatalf("LockSession(a) by the second client after the unlock: %v", err)
	}
	again, err := c2.ReceiveFromSession(ctx, "a", broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 5, MaxWait: time.Second})
	if err != nil || !reflect.DeepEqual(seqs(again), []int64{3, 5}) || again[0].DeliveryCount != 2 {
		t.Fatalf("ReceiveFromSession(a) by the second client = %v, %v; want [3 5], delivered a second time", seqs(again), err)
	}
	if st, err := c2.SessionState(ctx, "sq", "a"); err != nil || string(st) != "state-a" {
		t.Fatalf("SessionState(a) by the new holder = %q, %v", st, err)
	}
}

func TestServeSessionNextAvailableTimesOut(t *testing.T) {
	env := newServe(t, nil)
	env.queue("sq", broker.EntitySettings{RequiresSession: true})
	c := env.dial(env.config(""))
	ctx := context.Background()
	start := time.Now()
	_, err := c.LockSession(ctx, "sq", "", 300*time.Millisecond)
	if broker.CodeOf(err) != broker.CodeTimeout {
		t.Fatalf("LockSession(next) with no session = %v, want CodeTimeout", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 2*time.Second {
		t.Fatalf("LockSession(next) gave up after %v; want about 300ms", d)
	}
	// A message arriving while it waits is its session's.
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = c.Send(ctx, "sq", sessionMessages("late"))
	}()
	lock, err := c.LockSession(ctx, "sq", "", 5*time.Second)
	if err != nil || lock.SessionID != "late" {
		t.Fatalf("LockSession(next) while a message arrives = %+v, %v; want session late", lock, err)
	}
	// A queue without sessions refuses session receivers.
	env.queue("plain", broker.EntitySettings{})
	if _, err := c.LockSession(ctx, "plain", "x", 0); !errors.Is(err, broker.ErrInvalid) {
		t.Fatalf("LockSession on a queue without sessions = %v, want ErrInvalid", err)
	}
}

func TestServeSessionLocksLostWithConnection(t *testing.T) {
	env := newServe(t, nil)
	env.queue("sq", broker.EntitySettings{RequiresSession: true})
	c := env.dial(env.config(""))
	ctx := context.Background()
	if err := c.Send(ctx, "sq", sessionMessages("a", "a", "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LockSession(ctx, "sq", "a", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LockSession(ctx, "sq", "b", 0); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReceiveFromSession(ctx, "a", broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("ReceiveFromSession = %v, %v", seqs(got), err)
	}

	env.proxy.cut(true)
	waitFor(t, 5*time.Second, "the reconnecting state", func() bool { return strings.HasPrefix(c.State(), "reconnecting") })
	start := time.Now()
	for _, sid := range []string{"a", "b"} {
		if _, err := c.ReceiveFromSession(ctx, sid, broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 1}); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("ReceiveFromSession(%s) after the drop = %v, want ErrSessionLockLost", sid, err)
		}
		if _, err := c.RenewSession(ctx, "sq", sid); !errors.Is(err, broker.ErrSessionLockLost) || !strings.Contains(err.Error(), "connection") {
			t.Fatalf("RenewSession(%s) after the drop = %v, want ErrSessionLockLost naming the connection", sid, err)
		}
		if _, err := c.SessionState(ctx, "sq", sid); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("SessionState(%s) after the drop = %v, want ErrSessionLockLost", sid, err)
		}
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "sq", Token: got[0].LockToken}); !errors.Is(err, broker.ErrLockLost) {
		t.Fatalf("settling a session message after the drop = %v, want ErrLockLost", err)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Fatalf("the lost session locks took %v to report", d)
	}

	env.proxy.up()
	waitFor(t, 5*time.Second, "reconnection", func() bool { return c.State() == StateConnected })
	waitFor(t, 5*time.Second, "the listener to release session a", func() bool { return !sessionLocked(t, env, "sq", "a") })
	if _, err := c.LockSession(ctx, "sq", "a", 0); err != nil {
		t.Fatalf("LockSession(a) after reconnecting: %v", err)
	}
	again, err := c.ReceiveFromSession(ctx, "a", broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 5, MaxWait: time.Second})
	if err != nil || !reflect.DeepEqual(seqs(again), []int64{1, 2}) {
		t.Fatalf("ReceiveFromSession(a) after reconnecting = %v, %v; want [1 2]", seqs(again), err)
	}
	if err := c.UnlockSession(ctx, "sq", "b"); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("UnlockSession(b) of a lost lock = %v, want ErrSessionLockLost", err)
	}
}

func TestServeSessionLockExpires(t *testing.T) {
	clock, env, cfg := sessionServe(t)
	start := clock.Now()
	c := env.dial(cfg)
	ctx := context.Background()
	if err := c.Send(ctx, "sq", sessionMessages("a", "a", "b")); err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{"a", "b"} {
		if _, err := c.LockSession(ctx, "sq", sid, 0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.ReceiveFromSession(ctx, "a", broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("ReceiveFromSession = %v, %v", seqs(got), err)
	}
	// Not renewed: the listener's session lock expires and it detaches
	// the link with com.microsoft:session-lock-lost.
	clock.Advance(31 * time.Second)
	waitFor(t, 5*time.Second, "the listener to drop sessions a and b", func() bool {
		return !sessionLocked(t, env, "sq", "a") && !sessionLocked(t, env, "sq", "b")
	})
	// An expired lock this client has not yet noticed is taken anew.
	lockB, err := c.LockSession(ctx, "sq", "b", 0)
	if err != nil || !lockB.LockedUntil.Equal(start.Add(61*time.Second)) {
		t.Fatalf("LockSession(b) after it expired = %+v, %v; want locked until %v", lockB, err, start.Add(61*time.Second))
	}
	if gotB, err := c.ReceiveFromSession(ctx, "b", broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 1, MaxWait: time.Second}); err != nil || !reflect.DeepEqual(seqs(gotB), []int64{3}) {
		t.Fatalf("ReceiveFromSession(b) on the new lock = %v, %v; want [3]", seqs(gotB), err)
	}
	if _, err := c.ReceiveFromSession(ctx, "a", broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 1, MaxWait: time.Second}); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("ReceiveFromSession after the lock expired = %v, want ErrSessionLockLost", err)
	}
	if _, err := c.RenewSession(ctx, "sq", "a"); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("RenewSession after the lock expired = %v, want ErrSessionLockLost", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "sq", Token: got[0].LockToken}); !errors.Is(err, broker.ErrLockLost) {
		t.Fatalf("settling a message of the expired session = %v, want ErrLockLost", err)
	}
	// It can be locked again.
	lock, err := c.LockSession(ctx, "sq", "a", 0)
	if err != nil || !lock.LockedUntil.Equal(start.Add(61*time.Second)) {
		t.Fatalf("LockSession(a) again = %+v, %v; want locked until %v", lock, err, start.Add(61*time.Second))
	}
}

// Deferred messages of a held session come back by sequence number from a
// real listener, with two sessions held on the connection (so the listener
// must be told which), settle through the management node, and go with
// the session lock.
func TestServeSessionReceiveDeferred(t *testing.T) {
	clock, env, cfg := sessionServe(t)
	start := clock.Now()
	c := env.dial(cfg)
	ctx := context.Background()
	if err := c.Send(ctx, "sq", sessionMessages("a", "b", "a", "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReceiveDeferredFromSession(ctx, "sq", "a", []int64{1}); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("ReceiveDeferredFromSession without the lock = %v, want ErrSessionLockLost", err)
	}
	deferred := map[string][]int64{}
	for _, sid := range []string{"a", "b"} {
		if _, err := c.LockSession(ctx, "sq", sid, 0); err != nil {
			t.Fatal(err)
		}
		got, err := c.ReceiveFromSession(ctx, sid, broker.ReceiveRequest{Entity: "sq", Mode: broker.PeekLock, Max: 2, MaxWait: time.Second})
		if err != nil || len(got) != 2 {
			t.Fatalf("ReceiveFromSession(%s) = %v, %v", sid, seqs(got), err)
		}
		for _, m := range got {
			if err := c.Settle(ctx, broker.Settlement{Kind: broker.Defer, Entity: "sq", Token: m.LockToken}); err != nil {
				t.Fatalf("Defer %d: %v", m.SequenceNumber, err)
			}
		}
		deferred[sid] = seqs(got)
	}
	if !reflect.DeepEqual(deferred, map[string][]int64{"a": {1, 3}, "b": {2, 4}}) {
		t.Fatalf("deferred = %v", deferred)
	}
	if _, err := c.ReceiveDeferredFromSession(ctx, "sq", "a", []int64{2}); !errors.Is(err, broker.ErrMessageNotFound) {
		t.Fatalf("b's message through a = %v, want ErrMessageNotFound", err)
	}
	clock.Advance(5 * time.Second)
	got, err := c.ReceiveDeferredFromSession(ctx, "sq", "a", []int64{1, 3})
	if err != nil || !reflect.DeepEqual(seqs(got), []int64{1, 3}) {
		t.Fatalf("ReceiveDeferredFromSession(a, 1 3) = %v, %v", seqs(got), err)
	}
	for _, m := range got {
		if m.SessionID != "a" || m.LockToken.IsZero() || m.DeliveryCount != 2 || !m.LockedUntil.Equal(start.Add(30*time.Second)) { // the session lock's expiry
			t.Fatalf("message %d: session %q, token %v, delivery count %d, locked until %v", m.SequenceNumber, m.SessionID, m.LockToken, m.DeliveryCount, m.LockedUntil)
		}
	}
	if held, err := c.Browse(ctx, broker.BrowseRequest{Entity: "sq", Category: broker.CategoryLocked, Max: 10}); err != nil || !reflect.DeepEqual(seqs(held), []int64{1, 3}) {
		t.Fatalf("Locked = %v, %v; want [1 3]", seqs(held), err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "sq", Token: got[0].LockToken}); err != nil {
		t.Fatalf("Complete of a deferred session message: %v", err)
	}
	if n := listenerCounts(t, env, "sq"); n.Deferred != 2 || n.Locked != 1 || n.Active != 0 {
		t.Fatalf("listener counts after complete = %+v; want 2 deferred (b's), 1 locked", n)
	}
	// The other lock goes with the session lock.
	if err := c.UnlockSession(ctx, "sq", "a"); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "sq", Token: got[1].LockToken}); !errors.Is(err, broker.ErrLockLost) {
		t.Fatalf("Complete after the session lock was given back = %v, want ErrLockLost", err)
	}
	// The listener gives the session back before it answers the detach.
	if n := listenerCounts(t, env, "sq"); n.Deferred != 3 || n.Locked != 0 {
		t.Fatalf("listener counts right after unlock = %+v; want 3 deferred", n)
	}
}

// listenerCounts returns the listener's counts of entity.
func listenerCounts(t *testing.T, env *serveEnv, entity string) broker.Counts {
	t.Helper()
	ent, err := env.eng.Entity(context.Background(), entity)
	if err != nil {
		t.Fatal(err)
	}
	return ent.Counts
}
