package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// history returns the history of message seq of path, failing t on an error.
func (f *fixture) history(path string, seq int64) broker.History {
	f.t.Helper()
	h, err := f.e.History(f.ctx, path, seq)
	if err != nil {
		f.t.Fatalf("history of %s %d: %v", path, seq, err)
	}
	return h
}

// kinds lists the kinds of h's events.
func kinds(h broker.History) []broker.EventKind {
	out := make([]broker.EventKind, len(h.Events))
	for i, ev := range h.Events {
		out[i] = ev.Kind
	}
	return out
}

// wantKinds fails t unless h's events are of the kinds want, in order.
func wantKinds(t *testing.T, h broker.History, want ...broker.EventKind) {
	t.Helper()
	if got := kinds(h); !slices.Equal(got, want) {
		t.Fatalf("history kinds = %v, want %v\n%s", got, want, dumpHistory(h))
	}
}

func dumpHistory(h broker.History) string {
	var b strings.Builder
	for _, ev := range h.Events {
		fmt.Fprintf(&b, "  %s %s by %q dc=%d reason=%q detail=%q until=%s\n", ev.Time.Format(time.TimeOnly), ev.Kind, ev.Actor,
			ev.DeliveryCount, ev.Reason, ev.Detail, ev.LockedUntil.Format(time.TimeOnly))
	}
	return b.String()
}

// wantGone fails t unless the message has no history any more, in the
// engine and (a memory store) in the store.
func wantGone(t *testing.T, f *fixture, st store.Store, path string, seq int64) {
	t.Helper()
	if _, err := f.e.History(f.ctx, path, seq); broker.CodeOf(err) != broker.CodeMessageNotFound {
		t.Fatalf("history of a settled message: %v, want ErrMessageNotFound", err)
	}
	if m, ok := st.(*store.Memory); ok && m.HistoryCount() != 0 {
		t.Fatalf("the memory store keeps %d histories of settled messages", m.HistoryCount())
	}
	en, _, _ := f.e.lookup(path)
	if _, evs, _ := f.e.store.History(store.HistoryKey{Entity: en.id, Seq: seq}); len(evs) != 0 {
		t.Fatalf("the store keeps the history of a settled message: %+v", evs)
	}
}

// TestHistoryOfAMessage walks one message through every kind of event a
// client causes, by named actors, and checks each event, that the history
// survives a restart, and that it goes with its message.
func TestHistoryOfAMessage(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		st := newStore()
		f := newFixture(t, st)
		f.queue("q", broker.EntitySettings{LockDuration: 30 * time.Second, MaxDeliveryCount: 10})
		sender := f.e.As("connection 1f (container app) link s")
		receiver := f.e.As("connection 2a (container worker) link r")
		if err := sender.Send(f.ctx, "q", []*broker.Message{msg("m1")}); err != nil {
			t.Fatal(err)
		}
		receive := func() *broker.Message {
			t.Helper()
			ms, err := receiver.Receive(f.ctx, broker.ReceiveRequest{Entity: "q", Max: 1})
			if err != nil || len(ms) != 1 {
				t.Fatalf("receive: %v, %v", ms, err)
			}
			return ms[0]
		}
		settle := func(s broker.Settlement) {
			t.Helper()
			s.Entity = cmpOr(s.Entity, "q")
			if err := receiver.Settle(f.ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		m := receive()
		f.clock.Advance(10 * time.Second)
		if _, err := receiver.RenewLock(f.ctx, "q", m.LockToken); err != nil {
			t.Fatal(err)
		}
		settle(broker.Settlement{Kind: broker.Abandon, Token: m.LockToken, PropertiesToModify: map[string]any{"retry": int64(1)}})
		m2 := receive()
		f.advance(31 * time.Second) // the lock runs out
		m3 := receive()
		settle(broker.Settlement{Kind: broker.Release, Token: m3.LockToken})
		m4 := receive()
		settle(broker.Settlement{Kind: broker.Defer, Token: m4.LockToken})
		ms, err := receiver.ReceiveDeferred(f.ctx, "q", []int64{1})
		if err != nil || len(ms) != 1 {
			t.Fatalf("receive deferred: %v, %v", ms, err)
		}
		settle(broker.Settlement{Kind: broker.DeadLetter, Token: ms[0].LockToken, Reason: "poison", Description: "cannot parse"})

		h := f.history("q/$DeadLetterQueue", 1)
		wantKinds(t, h, broker.EventSent, broker.EventLocked, broker.EventRenewed, broker.EventAbandoned,
			broker.EventLocked, broker.EventLockExpired, broker.EventLocked, broker.EventReleased,
			broker.EventLocked, broker.EventDeferred, broker.EventLocked, broker.EventDeadLettered)
		ev := h.Events
		checks := []struct {
			i                  int
			actor, reason, det string
			count              uint32
		}{
			{0, "connection 1f (container app) link s", "", "", 1},
			{1, "connection 2a (container worker) link r", "", "", 1},
			{2, "connection 2a (container worker) link r", "", "", 1},
			{3, "connection 2a (container worker) link r", "", "properties changed: retry=1", 2},
			{5, broker.ActorBroker, "", "", 3},
			{7, "connection 2a (container worker) link r", "", "", 3},
			{10, "connection 2a (container worker) link r", "", "deferred message received by sequence number", 4}, // the deferral counted
			{11, "connection 2a (container worker) link r", "poison", "cannot parse", 4},
		}
		for _, c := range checks {
			e := ev[c.i]
			if e.Actor != c.actor || e.Reason != c.reason || e.Detail != c.det || e.DeliveryCount != c.count {
				t.Errorf("event %d (%s): actor %q reason %q detail %q count %d; want %q %q %q %d",
					c.i, e.Kind, e.Actor, e.Reason, e.Detail, e.DeliveryCount, c.actor, c.reason, c.det, c.count)
			}
		}
		if ev[1].Token != m.LockToken || !ev[1].LockedUntil.Equal(t0.Add(30*time.Second)) {
			t.Errorf("delivery: token %v until %v; want %v %v", ev[1].Token, ev[1].LockedUntil, m.LockToken, t0.Add(30*time.Second))
		}
		if !ev[2].LockedUntil.Equal(t0.Add(40*time.Second)) || !ev[2].Time.Equal(t0.Add(10*time.Second)) {
			t.Errorf("renewal: at %v until %v", ev[2].Time, ev[2].LockedUntil)
		}
		if ev[5].Token != m2.LockToken {
			t.Errorf("lock expiry names token %v, want %v", ev[5].Token, m2.LockToken)
		}
		if ev[11].SubQueue != broker.SubQueueDeadLetter || ev[0].SubQueue != broker.SubQueueMain {
			t.Errorf("sub-queues: sent in %v, dead-lettered in %v", ev[0].SubQueue, ev[11].SubQueue)
		}

		// A restart keeps the history.
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		if got := g.history("q/$DeadLetterQueue", 1); !slices.Equal(kinds(got), kinds(h)) {
			t.Fatalf("after a restart: %v, want %v", kinds(got), kinds(h))
		}
		// And the history goes with its message.
		dl, err := g.e.Receive(g.ctx, broker.ReceiveRequest{Entity: "q/$DeadLetterQueue", Max: 1})
		if err != nil || len(dl) != 1 {
			t.Fatalf("receive from the dead-letter sub-queue: %v, %v", dl, err)
		}
		if err := g.e.Settle(g.ctx, broker.Settlement{Kind: broker.Complete, Entity: "q/$DeadLetterQueue", Token: dl[0].LockToken}); err != nil {
			t.Fatal(err)
		}
		wantGone(t, g, st, "q", 1)
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestHistoryMaxDeliveryCount: a message dead-lettered for
// MaxDeliveryCountExceeded shows each failed delivery with its cause (an
// abandon, a lock that ran out, a lock lost to a change of the entity) and
// the broker as the one that dead-lettered it.
func TestHistoryMaxDeliveryCount(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: time.Minute, MaxDeliveryCount: 3})
		f.send("q", msg("m1"))
		f.mustSettle(broker.Abandon, "q", f.receiveOne("q"))
		f.receiveOne("q")
		f.advance(2 * time.Minute)
		f.receiveOne("q")
		ent, err := f.e.Entity(f.ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		ent.Settings.LockDuration = 2 * time.Minute
		if err := f.e.UpdateEntity(f.ctx, ent); err != nil {
			t.Fatal(err)
		}
		h := f.history("q/$DeadLetterQueue", 1)
		wantKinds(t, h, broker.EventSent, broker.EventLocked, broker.EventAbandoned, broker.EventLocked,
			broker.EventLockExpired, broker.EventLocked, broker.EventLockLost, broker.EventDeadLettered)
		lost, dead := h.Events[6], h.Events[7]
		if lost.Reason != "the entity was changed" || lost.Actor != broker.ActorBroker || lost.DeliveryCount != 4 {
			t.Errorf("lock loss: %+v", lost)
		}
		if dead.Reason != broker.ReasonMaxDeliveryCountExceeded || dead.Actor != broker.ActorBroker ||
			dead.SubQueue != broker.SubQueueDeadLetter || !strings.Contains(dead.Detail, "3 delivery attempts") {
			t.Errorf("dead-lettering: %+v", dead)
		}
		for i, want := range map[int]uint32{2: 2, 4: 3} {
			if h.Events[i].DeliveryCount != want {
				t.Errorf("event %d (%s) leaves delivery count %d, want %d", i, h.Events[i].Kind, h.Events[i].DeliveryCount, want)
			}
		}
	})
}

// TestHistoryByTheBroker: scheduling and activation, and a time to live
// that runs out into the dead-letter sub-queue, are the broker's doing.
func TestHistoryByTheBroker(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{DeadLetteringOnMessageExpiration: true})
		m := msg("m1")
		m.TimeToLive = time.Hour
		if _, err := f.e.Schedule(f.ctx, "q", t0.Add(time.Minute), []*broker.Message{m}); err != nil {
			t.Fatal(err)
		}
		f.advance(time.Minute)
		f.advance(time.Hour)
		h := f.history("q", 1)
		wantKinds(t, h, broker.EventScheduled, broker.EventActivated, broker.EventExpired, broker.EventDeadLettered)
		for _, ev := range h.Events[1:] {
			if ev.Actor != broker.ActorBroker {
				t.Errorf("%s by %q, want the broker", ev.Kind, ev.Actor)
			}
		}
		if h.Events[0].Actor != broker.ActorDashboard {
			t.Errorf("scheduled by %q, want %q (a call that names no actor)", h.Events[0].Actor, broker.ActorDashboard)
		}
		if r := h.Events[3].Reason; r != broker.ReasonTTLExpired {
			t.Errorf("dead-letter reason %q", r)
		}
	})
}

// TestHistoryLockLostOnRestart: a message locked when the broker stops
// shows the lock lost to the restart.
func TestHistoryLockLostOnRestart(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.send("q", msg("m1"))
		m := f.receiveOne("q")
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Second)
		g := openFixture(t, newStore(), f.clock)
		h := g.history("q", 1)
		wantKinds(t, h, broker.EventSent, broker.EventLocked, broker.EventLockLost)
		lost := h.Events[2]
		if !strings.Contains(lost.Reason, "restarted") || lost.Token != m.LockToken || !lost.Time.Equal(t0.Add(time.Second)) {
			t.Errorf("lock lost: %+v", lost)
		}
		// Recorded once, not at each reading.
		wantKinds(t, g.history("q", 1), broker.EventSent, broker.EventLocked, broker.EventLockLost)
	})
}

// TestHistoryPassedOn: a fan-out copy, a forwarded message, a message
// locked by its sequence number and a resubmitted copy say where they come
// from; the original of the resubmit points at the copy.
func TestHistoryPassedOn(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}))
		must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription}))
		f.queue("dest", broker.EntitySettings{})
		f.queue("fw", broker.EntitySettings{ForwardTo: "dest"})
		f.send("t", msg("fan"))
		f.send("fw", msg("fwd"))
		if d := f.history("t/Subscriptions/s", 1).Events[0].Detail; d != "fanned out from t" {
			t.Errorf("fan-out copy: %q", d)
		}
		if d := f.history("dest", 1).Events[0].Detail; d != "forwarded from fw" {
			t.Errorf("forwarded message: %q", d)
		}
		f.send("dest", msg("two"))
		if _, err := f.e.LockSequence(f.ctx, "dest", []int64{2}); err != nil {
			t.Fatal(err)
		}
		if d := f.history("dest", 2).Events[1].Detail; d != "locked by sequence number" {
			t.Errorf("lock by sequence number: %q", d)
		}

		f.mustSettle(broker.DeadLetter, "dest", f.receiveOne("dest"))
		dl, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: "dest/$DeadLetterQueue", Max: 1})
		if err != nil || len(dl) != 1 {
			t.Fatalf("receive dead-lettered: %v %v", dl, err)
		}
		// The two steps of Resubmit before the original is completed: the
		// send of the copy, and the note on the original.
		copySeq, err := f.e.SendResubmitted(f.ctx, "dest", dl[0].CopyForSend(), "dest/$DeadLetterQueue", 1)
		if err != nil || copySeq != 3 {
			t.Fatalf("SendResubmitted = %d, %v; want 3", copySeq, err)
		}
		must(f.e.NoteResubmitted(f.ctx, "dest/$DeadLetterQueue", 1, "dest", copySeq))
		orig := f.history("dest/$DeadLetterQueue", 1)
		if last := orig.Events[len(orig.Events)-1]; last.Kind != broker.EventResubmitted || last.Detail != "resubmitted as sequence number 3 in dest" {
			t.Errorf("original: %+v", last)
		}
		if d := f.history("dest", 3).Events[0].Detail; d != "resubmitted from dest/$DeadLetterQueue (sequence number 1)" {
			t.Errorf("copy: %q", d)
		}
		// The note names the handle's actor, and an original no longer
		// there has no history to note it in.
		must(f.e.As("cli alice").NoteResubmitted(f.ctx, "dest/$DeadLetterQueue", 1, "dest", copySeq))
		orig = f.history("dest/$DeadLetterQueue", 1)
		if last := orig.Events[len(orig.Events)-1]; last.Actor != "cli alice" {
			t.Errorf("note by a named handle: actor %q", last.Actor)
		}
		if err := f.e.NoteResubmitted(f.ctx, "dest/$DeadLetterQueue", 99, "dest", copySeq); err != nil {
			t.Errorf("note on a message no longer there: %v", err)
		}
	})
}

// boundedHistoryFixture is a fixture on st whose engine keeps at most
// limit events of each message's history.
func boundedHistoryFixture(t *testing.T, st store.Store, limit int) *fixture {
	e, err := New(Options{Store: st, Clock: newFixture(t, store.NewMemory()).clock, HistoryLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return &fixture{t: t, e: e, ctx: context.Background()}
}

// TestHistoryBounded: a message's history keeps the newest events and
// counts the others; deleting the message deletes every one left.
func TestHistoryBounded(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		st := newStore()
		f := boundedHistoryFixture(t, st, 4)
		f.queue("q", broker.EntitySettings{})
		f.send("q", msg("m1"))
		m := f.receiveOne("q")
		for i := range 10 {
			if _, err := f.e.RenewLock(f.ctx, "q", m.LockToken); err != nil {
				t.Fatal(err)
			}
			if i == 2 { // five events: the send, kept in the message's record, is folded away
				h := f.history("q", 1)
				if h.Folded != 1 {
					t.Fatalf("folded %d, want 1\n%s", h.Folded, dumpHistory(h))
				}
				wantKinds(t, h, broker.EventLocked, broker.EventRenewed, broker.EventRenewed, broker.EventRenewed)
			}
		}
		h := f.history("q", 1)
		if h.Folded != 8 || len(h.Events) != 4 {
			t.Fatalf("folded %d, %d events; want 8 and 4\n%s", h.Folded, len(h.Events), dumpHistory(h))
		}
		wantKinds(t, h, broker.EventRenewed, broker.EventRenewed, broker.EventRenewed, broker.EventRenewed)
		f.mustSettle(broker.Complete, "q", m)
		wantGone(t, f, st, "q", 1)
	})
}

// TestHistoryOff: with history off nothing is recorded and History says so.
func TestHistoryOff(t *testing.T) {
	st := store.NewMemory()
	e, err := New(Options{Store: st, NoHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	f := &fixture{t: t, e: e, ctx: context.Background()}
	f.queue("q", broker.EntitySettings{})
	f.send("q", msg("m1"))
	f.receiveOne("q")
	if _, err := e.History(f.ctx, "q", 1); broker.CodeOf(err) != broker.CodeNotSupported {
		t.Fatalf("History with history off: %v, want CodeNotSupported", err)
	}
	if n := st.HistoryCount(); n != 0 {
		t.Fatalf("%d histories stored with history off", n)
	}
}
