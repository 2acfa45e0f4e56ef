package engine

import (
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// waitGone waits (in real time, for the sweeper) until the entity at path
// no longer exists.
func (f *fixture) waitGone(path string) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := f.e.Entity(f.ctx, path)
		if broker.CodeOf(err) == broker.CodeNotFound {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s still exists (err %v)", path, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// wantExists fails unless the entity at path exists.
func (f *fixture) wantExists(path string) {
	f.t.Helper()
	if _, err := f.e.Entity(f.ctx, path); err != nil {
		f.t.Fatalf("%s: %v", path, err)
	}
}

// TestAutoDeleteOnIdle: the sweeper deletes a queue idle for its
// AutoDeleteOnIdle, with its messages; a send, a receive, a settlement and
// an update each start the idle time again; browsing does not.
func TestAutoDeleteOnIdle(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{AutoDeleteOnIdle: 5 * time.Minute, LockDuration: 5 * time.Minute})
		f.queue("forever", broker.EntitySettings{})
		ent, _ := f.e.Entity(f.ctx, "q")
		if ent.Settings.AutoDeleteOnIdle != 5*time.Minute {
			t.Fatalf("AutoDeleteOnIdle = %v", ent.Settings.AutoDeleteOnIdle)
		}
		f.advance(4 * time.Minute)
		f.send("q", msg("m1"))
		f.advance(4 * time.Minute)
		got := f.receiveOne("q")
		f.advance(4 * time.Minute)
		f.mustSettle(broker.Abandon, "q", got)
		f.advance(4 * time.Minute)
		ent, _ = f.e.Entity(f.ctx, "q")
		if err := f.e.UpdateEntity(f.ctx, ent); err != nil {
			t.Fatal(err)
		}
		f.advance(4 * time.Minute)
		f.browse("q", broker.CategoryActive)
		f.advance(time.Minute - time.Second)
		f.wantExists("q")
		// Five minutes after the update: the sweeper deletes it on its own.
		f.clock.Advance(time.Second)
		f.waitGone("q")
		f.wantExists("forever")

		// Deleted for good: not back after a restart.
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		if _, err := g.e.Entity(g.ctx, "q"); broker.CodeOf(err) != broker.CodeNotFound {
			t.Fatalf("after restart: %v", err)
		}
		g.wantExists("forever")
	})
}

// TestAutoDeleteOnIdleTopics: an operation on a subscription keeps its topic
// from being idle; an idle subscription is deleted alone, an idle topic
// with its subscriptions. The fan-out of a topic send does not keep a
// subscription alive.
func TestAutoDeleteOnIdleTopics(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	ctx := f.ctx
	create := func(ent broker.Entity) {
		t.Helper()
		if err := f.e.CreateEntity(ctx, ent); err != nil {
			t.Fatal(err)
		}
	}
	create(broker.Entity{Path: "t", Kind: broker.KindTopic, Settings: broker.EntitySettings{AutoDeleteOnIdle: 10 * time.Minute}})
	create(broker.Entity{Path: "t/Subscriptions/busy", Kind: broker.KindSubscription})
	create(broker.Entity{Path: "t/Subscriptions/idle", Kind: broker.KindSubscription, Settings: broker.EntitySettings{AutoDeleteOnIdle: 6 * time.Minute}})
	f.advance(5 * time.Minute)
	f.send("t", msg("m1"))
	f.advance(2 * time.Minute)
	f.wantExists("t")
	f.waitGone("t/Subscriptions/idle") // idle since its creation, 7 minutes ago
	f.receiveOne("t/Subscriptions/busy")
	f.advance(9 * time.Minute)
	f.wantExists("t") // the receive 9 minutes ago counts for the topic
	f.advance(time.Minute)
	f.waitGone("t")
	f.waitGone("t/Subscriptions/busy")
}

// TestAutoDeleteOnIdleRestart: the idle time is kept in memory only; after
// a restart it counts from the load.
func TestAutoDeleteOnIdleRestart(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{AutoDeleteOnIdle: 5 * time.Minute})
		f.advance(4 * time.Minute)
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		g.advance(4 * time.Minute)
		g.wantExists("q")
		g.advance(time.Minute)
		g.waitGone("q")
	})
}

// TestAutoDeleteOnIdleLimits: Service Bus's minimum is five minutes;
// nothing shorter is taken, and the default is never.
func TestAutoDeleteOnIdleLimits(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, Settings: broker.EntitySettings{AutoDeleteOnIdle: 4 * time.Minute}})
	be := wantCode(t, err, broker.CodeInvalid)
	if want := "AutoDeleteOnIdle PT4M is shorter than the minimum of PT5M"; be.Message != want {
		t.Fatalf("message = %q, want %q", be.Message, want)
	}
	f.queue("q", broker.EntitySettings{})
	ent, _ := f.e.Entity(f.ctx, "q")
	if ent.Settings.AutoDeleteOnIdle != broker.MaxTimeToLive {
		t.Fatalf("default AutoDeleteOnIdle = %v", ent.Settings.AutoDeleteOnIdle)
	}
	f.advance(1000 * 24 * time.Hour)
	f.wantExists("q")
}
