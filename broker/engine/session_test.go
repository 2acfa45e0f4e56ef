package engine

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

func sessionMsg(id, session string) *broker.Message {
	m := msg(id)
	m.SessionID = session
	return m
}

func TestSessions(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("s", broker.EntitySettings{RequiresSession: true, LockDuration: 30 * time.Second})
		ctx := f.ctx
		wantCode(t, f.e.Send(ctx, "s", []*broker.Message{msg("no-session")}), broker.CodeInvalid)
		f.send("s", sessionMsg("a1", "A"), sessionMsg("b1", "B"), sessionMsg("a2", "A"), sessionMsg("b2", "B"), sessionMsg("a3", "A"))
		_, err := f.e.Receive(ctx, broker.ReceiveRequest{Entity: "s", Max: 1})
		wantCode(t, err, broker.CodeInvalid)

		// Accept the next session: A has the oldest message.
		lockA, err := f.e.AcceptSession(ctx, 1, "s", "", 0)
		if err != nil || lockA.SessionID != "A" || !lockA.LockedUntil.Equal(t0.Add(30*time.Second)) {
			t.Fatalf("accept next = %+v, %v", lockA, err)
		}
		_, err = f.e.AcceptSession(ctx, 2, "s", "A", 0)
		wantCode(t, err, broker.CodeSessionCannotLock)
		lockB, err := f.e.AcceptSession(ctx, 2, "s", "", 0)
		if err != nil || lockB.SessionID != "B" {
			t.Fatalf("second accept = %+v, %v", lockB, err)
		}
		_, err = f.e.AcceptSession(ctx, 3, "s", "", 0)
		wantCode(t, err, broker.CodeTimeout)

		// Only the holder receives, in order.
		_, err = f.e.ReceiveSession(ctx, 2, "A", broker.ReceiveRequest{Entity: "s", Max: 1})
		wantCode(t, err, broker.CodeSessionLockLost)
		got, err := f.e.ReceiveSession(ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 2})
		if err != nil || !slices.Equal(idsOf(got), []string{"a1", "a2"}) {
			t.Fatalf("session A receive = %v, %v", idsOf(got), err)
		}
		f.mustSettle(broker.Complete, "s", got[0])
		f.mustSettle(broker.Abandon, "s", got[1])
		again, _ := f.e.ReceiveSession(ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 5})
		if !slices.Equal(idsOf(again), []string{"a2", "a3"}) {
			t.Fatalf("after abandon = %v", idsOf(again))
		}

		// State.
		if err := f.e.SetSessionState(ctx, 2, "s", "A", []byte("x")); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("set state by non-holder: %v", err)
		}
		if err := f.e.SetSessionState(ctx, 1, "s", "A", []byte("state-1")); err != nil {
			t.Fatal(err)
		}
		st, err := f.e.SessionState(ctx, "s", "A")
		if err != nil || string(st) != "state-1" {
			t.Fatalf("state = %q, %v", st, err)
		}
		if st, err := f.e.HeldSessionState(ctx, 1, "s", "A"); err != nil || string(st) != "state-1" {
			t.Fatalf("holder's state = %q, %v", st, err)
		}
		if st, err := f.e.HeldSessionState(ctx, 2, "s", "A"); !errors.Is(err, broker.ErrSessionLockLost) || st != nil {
			t.Fatalf("state read by non-holder = %q, %v; want session lock lost", st, err)
		}

		// The session lock covers its messages: they do not expire on
		// their own LockDuration, renewing the session lock renews them,
		// and they end with it.
		f.advance(20 * time.Second)
		until, err := f.e.RenewSessionLock(ctx, 1, "s", "A")
		if err != nil || !until.Equal(t0.Add(50*time.Second)) {
			t.Fatalf("renew session = %v, %v", until, err)
		}
		f.advance(15 * time.Second) // 35s: B's lock (until 30s) expired; A's holds, and so do its messages (their own LockDuration ended at 30s)
		_, err = f.e.ReceiveSession(ctx, 2, "B", broker.ReceiveRequest{Entity: "s", Max: 1})
		wantCode(t, err, broker.CodeSessionLockLost)
		infos, _ := f.e.Sessions(ctx, "s")
		if len(infos) != 2 || !infos[0].Locked || infos[1].Locked || infos[1].Available != 2 || string(st) != "state-1" || infos[0].StateSize != 7 {
			t.Fatalf("sessions = %+v", infos)
		}
		for _, m := range again {
			if u, err := f.e.RenewLock(ctx, "s", m.LockToken); err != nil || !u.Equal(t0.Add(50*time.Second)) {
				t.Fatalf("renew message lock = %v, %v; want the session lock's expiry", u, err)
			}
		}
		f.wantCounts("s", broker.Counts{Active: 2, Locked: 2})
		f.advance(15 * time.Second) // 50s: A's session lock expired; its message locks are lost
		if _, err := f.e.HeldSessionState(ctx, 1, "s", "A"); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("state read after the session lock expired: %v; want session lock lost", err)
		}
		wantCode(t, f.settle(broker.Complete, "s", again[0]), broker.CodeSessionLockLost)
		// State survives the lock; another receiver takes A.
		lockA2, err := f.e.AcceptSession(ctx, 3, "s", "A", 0)
		if err != nil || lockA2.Token == lockA.Token {
			t.Fatalf("re-accept = %+v, %v", lockA2, err)
		}
		st, _ = f.e.SessionState(ctx, "s", "A")
		if string(st) != "state-1" {
			t.Fatalf("state after re-accept = %q", st)
		}
		got, _ = f.e.ReceiveSession(ctx, 3, "A", broker.ReceiveRequest{Entity: "s", Max: 5})
		if !slices.Equal(idsOf(got), []string{"a2", "a3"}) || got[0].DeliveryCount != 3 {
			t.Fatalf("re-accepted A = %v (delivery %d)", idsOf(got), got[0].DeliveryCount)
		}
		// Releasing loses the message locks; dropping the owner too.
		if err := f.e.ReleaseSession(ctx, 3, "s", "A"); err != nil {
			t.Fatal(err)
		}
		if err := f.settle(broker.Complete, "s", got[0]); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("complete after release: %v", err)
		}
		lb, _ := f.e.AcceptSession(ctx, 4, "s", "B", 0)
		f.e.DropOwner(4)
		if _, err := f.e.RenewSessionLock(ctx, 4, "s", lb.SessionID); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("renew after drop: %v", err)
		}
	})
}

func TestSessionDeferred(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("s", broker.EntitySettings{RequiresSession: true})
	f.send("s", sessionMsg("a1", "A"), sessionMsg("b1", "B"))
	if _, err := f.e.AcceptSession(f.ctx, 1, "s", "A", 0); err != nil {
		t.Fatal(err)
	}
	m, _ := f.e.ReceiveSession(f.ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 1})
	f.mustSettle(broker.Defer, "s", m[0])
	_, err := f.e.ReceiveDeferred(f.ctx, "s", []int64{1})
	wantCode(t, err, broker.CodeInvalid)
	_, err = f.e.ReceiveSessionDeferred(f.ctx, 1, "s", "A", []int64{2}) // B's message
	wantCode(t, err, broker.CodeMessageNotFound)
	got, err := f.e.ReceiveSessionDeferred(f.ctx, 1, "s", "A", []int64{1})
	if err != nil || len(got) != 1 || got[0].MessageID != "a1" {
		t.Fatalf("session deferred = %v, %v", got, err)
	}
	f.mustSettle(broker.Complete, "s", got[0])
}

func TestAcceptSessionWaits(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("s", broker.EntitySettings{RequiresSession: true})
	done := make(chan SessionLock, 1)
	go func() {
		l, err := f.e.AcceptSession(f.ctx, 1, "s", "", time.Hour)
		if err != nil {
			t.Error(err)
		}
		done <- l
	}()
	waitForWaiters(t, f, "s", broker.SubQueueMain, 1)
	f.send("s", sessionMsg("x", "X"))
	select {
	case l := <-done:
		if l.SessionID != "X" {
			t.Fatalf("accepted %q", l.SessionID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("AcceptSession did not wake up")
	}
}

// TestReleaseSessionTokenKeepsANewerLock: a receiver whose session lock
// expired gives back only its own lock; the newer lock its owner took for
// the same session stays.
func TestReleaseSessionTokenKeepsANewerLock(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("s", broker.EntitySettings{RequiresSession: true, LockDuration: 30 * time.Second})
		f.send("s", sessionMsg("a1", "A"))
		ctx := f.ctx
		old, err := f.e.AcceptSession(ctx, 1, "s", "A", 0)
		if err != nil {
			t.Fatal(err)
		}
		f.advance(31 * time.Second) // the old lock expires
		newer, err := f.e.AcceptSession(ctx, 1, "s", "A", 0)
		if err != nil || newer.Token == old.Token {
			t.Fatalf("accept again = %+v, %v", newer, err)
		}
		if err := f.e.ReleaseSessionToken(ctx, 1, "s", "A", old.Token); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("release with the old token = %v, want ErrSessionLockLost", err)
		}
		if got, err := f.e.ReceiveSession(ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 1}); err != nil || len(got) != 1 {
			t.Fatalf("receive under the newer lock = %v, %v", idsOf(got), err)
		}
		if err := f.e.ReleaseSessionToken(ctx, 1, "s", "A", newer.Token); err != nil {
			t.Fatalf("release with the newer token: %v", err)
		}
		if _, err := f.e.ReceiveSession(ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 1}); !errors.Is(err, broker.ErrSessionLockLost) {
			t.Fatalf("receive after release = %v, want ErrSessionLockLost", err)
		}
	})
}
