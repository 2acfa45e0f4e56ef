package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// setStatus updates an entity's status, keeping its other settings.
func (f *fixture) setStatus(path string, st broker.EntityStatus) {
	f.t.Helper()
	ent, err := f.e.Entity(f.ctx, path)
	if err != nil {
		f.t.Fatal(err)
	}
	ent.Settings.Status = st
	ent.Rules = nil
	if err := f.e.UpdateEntity(f.ctx, ent); err != nil {
		f.t.Fatalf("set the status of %s to %s: %v", path, st, err)
	}
}

// wantDisabled checks that err is CodeEntityDisabled with Service Bus's
// wording.
func wantDisabled(t *testing.T, err error, path, wording string) {
	t.Helper()
	be := wantCode(t, err, broker.CodeEntityDisabled)
	if want := "Messaging entity '" + path + "' is currently disabled" + wording; !strings.HasPrefix(be.Message, want) {
		t.Fatalf("message = %q, want it to start with %q", be.Message, want)
	}
}

// TestEntityStatusEnforced: SendDisabled refuses sends (scheduling
// included) and takes receives; ReceiveDisabled refuses receives,
// settlements and renewals (peeking still works) and takes sends; Disabled
// refuses both; Active takes both again. The status survives a restart.
func TestEntityStatusEnforced(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		ctx := f.ctx
		f.queue("q", broker.EntitySettings{})
		f.sendN("q", 2)

		f.setStatus("q", broker.StatusSendDisabled)
		wantDisabled(t, f.e.Send(ctx, "q", []*broker.Message{msg("x")}), "q", " for Send operations")
		_, err := f.e.Schedule(ctx, "q", t0.Add(time.Hour), []*broker.Message{msg("later")})
		wantDisabled(t, err, "q", " for Send operations")
		got := f.receiveOne("q")

		f.setStatus("q", broker.StatusReceiveDisabled)
		f.send("q", msg("m3"))
		_, err = f.e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1})
		wantDisabled(t, err, "q", " for Receive operations")
		_, err = f.e.Receive(ctx, broker.ReceiveRequest{Entity: "q" + broker.DeadLetterSuffix, Max: 1})
		wantDisabled(t, err, "q", " for Receive operations")
		wantDisabled(t, f.settle(broker.Complete, "q", got), "q", " for Receive operations")
		_, err = f.e.RenewLock(ctx, "q", got.LockToken)
		wantDisabled(t, err, "q", " for Receive operations")
		_, err = f.e.ReceiveDeferred(ctx, "q", []int64{1})
		wantDisabled(t, err, "q", " for Receive operations")
		if n := len(f.browse("q", broker.CategoryActive)); n != 3 {
			t.Fatalf("peek of a ReceiveDisabled queue shows %d messages, want 3", n)
		}

		f.setStatus("q", broker.StatusDisabled)
		wantDisabled(t, f.e.Send(ctx, "q", []*broker.Message{msg("x")}), "q", "")
		_, err = f.e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1})
		wantDisabled(t, err, "q", "")

		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		ent, err := g.e.Entity(ctx, "q")
		if err != nil || ent.Settings.Status != broker.StatusDisabled {
			t.Fatalf("status after restart = %v, %v", ent.Settings.Status, err)
		}
		wantDisabled(t, g.e.Send(ctx, "q", []*broker.Message{msg("x")}), "q", "")
		g.setStatus("q", broker.StatusActive)
		g.send("q", msg("m4"))
		if got := idsOf(g.receive("q", 10)); len(got) != 4 {
			t.Fatalf("receive after Active again = %v, want 4 messages", got)
		}
	})
}

// TestEntityStatusSessions: a ReceiveDisabled session-aware queue refuses
// to accept sessions and to receive from a session already held.
func TestEntityStatusSessions(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	ctx := f.ctx
	f.queue("s", broker.EntitySettings{RequiresSession: true})
	f.send("s", sessionMsg("a1", "A"))
	if _, err := f.e.AcceptSession(ctx, 1, "s", "A", 0); err != nil {
		t.Fatal(err)
	}
	f.setStatus("s", broker.StatusReceiveDisabled)
	_, err := f.e.ReceiveSession(ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 1})
	wantDisabled(t, err, "s", " for Receive operations")
	_, err = f.e.AcceptSession(ctx, 2, "s", "", 0)
	wantDisabled(t, err, "s", " for Receive operations")
}

// TestEntityStatusTopics: a SendDisabled topic refuses sends; a Disabled
// subscription still gets its copies (Service Bus copies messages into
// disabled subscriptions) but cannot be received from; the subscriptions of
// a Disabled topic cannot be received from either.
func TestEntityStatusTopics(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := topicFixture(t, newStore())
		ctx := f.ctx
		f.setStatus("t", broker.StatusSendDisabled)
		wantDisabled(t, f.e.Send(ctx, "t", []*broker.Message{msg("x")}), "t", " for Send operations")
		f.setStatus("t", broker.StatusActive)

		f.setStatus("t/Subscriptions/all", broker.StatusDisabled)
		f.send("t", msg("m1"))
		f.wantCounts("t/Subscriptions/all", broker.Counts{Active: 1})
		_, err := f.e.Receive(ctx, broker.ReceiveRequest{Entity: "t/Subscriptions/all", Max: 1})
		wantDisabled(t, err, "t/Subscriptions/all", "")
		f.setStatus("t/Subscriptions/all", broker.StatusActive)

		f.setStatus("t", broker.StatusDisabled)
		_, err = f.e.Receive(ctx, broker.ReceiveRequest{Entity: "t/Subscriptions/all", Max: 1})
		wantDisabled(t, err, "t/Subscriptions/all", "")
		f.setStatus("t", broker.StatusActive)
		f.receiveOne("t/Subscriptions/all")
	})
}

// TestEntityStatusWakesWaitingReceiver: a receiver waiting on an empty
// queue, or on a subscription, returns the error as soon as the status
// refuses receives.
func TestEntityStatusWakesWaitingReceiver(t *testing.T) {
	for _, c := range []struct{ wait, disable string }{
		{"q", "q"},
		{"t/Subscriptions/all", "t"},
	} {
		t.Run(c.disable, func(t *testing.T) {
			f := topicFixture(t, store.NewMemory())
			f.queue("q", broker.EntitySettings{})
			done := make(chan error, 1)
			go func() {
				_, err := f.e.Receive(context.Background(), broker.ReceiveRequest{Entity: c.wait, Max: 1, MaxWait: time.Hour})
				done <- err
			}()
			waitForWaiters(t, f, c.wait, broker.SubQueueMain, 1)
			f.setStatus(c.disable, broker.StatusDisabled)
			select {
			case err := <-done:
				wantDisabled(t, err, c.wait, "")
			case <-time.After(5 * time.Second):
				t.Fatal("the waiting receiver did not return")
			}
		})
	}
}

// TestForwardToDisabledEntity: a message auto-forwarded to an entity that
// takes no sends goes to the source's transfer dead-letter sub-queue, with
// Service Bus's exception name as the reason.
func TestForwardToDisabledEntity(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := topicFixture(t, newStore())
		f.queue("target", broker.EntitySettings{Status: broker.StatusSendDisabled})
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/fwd", Kind: broker.KindSubscription,
			Settings: broker.EntitySettings{ForwardTo: "target"}}); err != nil {
			t.Fatal(err)
		}
		f.send("t", msg("m1"))
		got := f.browse("t/Subscriptions/fwd", broker.CategoryDeadLettered)
		if len(got) != 1 || got[0].ApplicationProperties[broker.PropDeadLetterReason] != broker.ReasonEntityDisabled {
			t.Fatalf("transfer dead-lettered = %+v", got)
		}
		f.wantCounts("target", broker.Counts{})
	})
}
