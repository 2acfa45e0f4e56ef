package engine

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// The engine's own client (owner 0) locks sessions through
// broker.SessionClient, and another owner cannot take them.
func TestSessionClientOwnerZero(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("s", broker.EntitySettings{RequiresSession: true, LockDuration: 30 * time.Second})
	f.send("s", sessionMsg("a1", "A"), sessionMsg("b1", "B"), sessionMsg("a2", "A"))
	sc, ok := broker.SessionsOf(f.e)
	if !ok {
		t.Fatal("the engine is not a session client")
	}
	ctx := f.ctx
	l, err := sc.LockSession(ctx, "s", "", 0)
	if err != nil || l.SessionID != "A" || l.Entity != "s" || l.Token.IsZero() || !l.LockedUntil.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("lock next = %+v, %v", l, err)
	}
	if _, err := f.e.AcceptSession(ctx, 7, "s", "A", 0); !errors.Is(err, broker.ErrSessionCannotLock) {
		t.Fatalf("other owner accepts A: %v", err)
	}
	got, err := sc.ReceiveFromSession(ctx, "A", broker.ReceiveRequest{Entity: "s", Max: 5})
	if err != nil || !slices.Equal(idsOf(got), []string{"a1", "a2"}) {
		t.Fatalf("receive A = %v, %v", idsOf(got), err)
	}
	if _, err := sc.ReceiveFromSession(ctx, "B", broker.ReceiveRequest{Entity: "s", Max: 1}); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("receive from B without its lock: %v", err)
	}
	f.mustSettle(broker.Complete, "s", got[0])
	f.advance(10 * time.Second)
	until, err := sc.RenewSession(ctx, "s", "A")
	if err != nil || !until.Equal(t0.Add(40*time.Second)) {
		t.Fatalf("renew = %v, %v", until, err)
	}
	if err := f.e.SetSessionState(ctx, 0, "s", "A", []byte("st")); err != nil {
		t.Fatal(err)
	}
	if st, err := sc.SessionState(ctx, "s", "A"); err != nil || string(st) != "st" {
		t.Fatalf("state = %q, %v", st, err)
	}
	if err := sc.UnlockSession(ctx, "s", "A"); err != nil {
		t.Fatal(err)
	}
	// The message lock taken through the session went with it.
	if err := f.settle(broker.Complete, "s", got[1]); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("settle after release: %v", err)
	}
	if err := sc.UnlockSession(ctx, "s", "A"); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("second release: %v", err)
	}
}

// The engine's own client receives deferred messages of a session it holds
// by sequence number, on both stores; not those of another session, and
// none without the session lock.
func TestSessionClientReceiveDeferred(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("s", broker.EntitySettings{RequiresSession: true, LockDuration: 30 * time.Second})
		f.send("s", sessionMsg("a1", "A"), sessionMsg("b1", "B"))
		sc, _ := broker.SessionsOf(f.e)
		ctx := f.ctx
		if _, err := sc.ReceiveDeferredFromSession(ctx, "s", "A", []int64{1}); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("without the session lock: %v", err)
		}
		if _, err := sc.LockSession(ctx, "s", "A", 0); err != nil {
			t.Fatal(err)
		}
		got, err := sc.ReceiveFromSession(ctx, "A", broker.ReceiveRequest{Entity: "s", Max: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("receive A = %v, %v", got, err)
		}
		f.mustSettle(broker.Defer, "s", got[0])
		if _, err := sc.ReceiveDeferredFromSession(ctx, "s", "A", []int64{2}); !errors.Is(err, broker.ErrMessageNotFound) {
			t.Fatalf("B's message through A: %v", err)
		}
		f.advance(5 * time.Second)
		d, err := sc.ReceiveDeferredFromSession(ctx, "s", "A", []int64{1})
		if err != nil || len(d) != 1 || d[0].MessageID != "a1" || d[0].SequenceNumber != 1 || d[0].DeliveryCount != 2 ||
			d[0].LockToken.IsZero() || !d[0].LockedUntil.Equal(t0.Add(30*time.Second)) { // the session lock's expiry
			t.Fatalf("deferred from A = %+v, %v", d, err)
		}
		f.mustSettle(broker.Complete, "s", d[0])
		f.wantCounts("s", broker.Counts{Active: 1})
		// A message lock taken that way goes with the session lock.
		f.send("s", sessionMsg("a2", "A"))
		got, _ = sc.ReceiveFromSession(ctx, "A", broker.ReceiveRequest{Entity: "s", Max: 1})
		f.mustSettle(broker.Defer, "s", got[0])
		d, err = sc.ReceiveDeferredFromSession(ctx, "s", "A", []int64{got[0].SequenceNumber})
		if err != nil || len(d) != 1 {
			t.Fatalf("deferred a2 = %v, %v", d, err)
		}
		if err := sc.UnlockSession(ctx, "s", "A"); err != nil {
			t.Fatal(err)
		}
		if err := f.settle(broker.Complete, "s", d[0]); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("settle after release: %v", err)
		}
	})
}
