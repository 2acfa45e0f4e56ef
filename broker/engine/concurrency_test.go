package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// Eight receivers on one queue never hold the same message at once, and
// every message is completed exactly once.
func TestConcurrentReceiversNeverShareAMessage(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		e, err := New(Options{Store: newStore()})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		ctx := context.Background()
		if err := e.CreateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue}); err != nil {
			t.Fatal(err)
		}
		const total = 2000
		var holding sync.Map // seq -> receiver
		var completed [total + 1]atomic.Int32
		var done atomic.Int64
		var wg sync.WaitGroup
		// Senders run concurrently with the receivers.
		for s := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < total/2; i += 50 {
					batch := make([]*broker.Message, 50)
					for j := range batch {
						batch[j] = &broker.Message{MessageID: fmt.Sprintf("s%d-%d", s, i+j), Body: []byte("x")}
					}
					if err := e.Send(ctx, "q", batch); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		for r := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for done.Load() < total {
					ms, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 7, MaxWait: 20 * time.Millisecond})
					if err != nil {
						t.Error(err)
						return
					}
					for _, m := range ms {
						if prev, loaded := holding.LoadOrStore(m.SequenceNumber, r); loaded {
							t.Errorf("seq %d handed to receiver %d while receiver %v holds it", m.SequenceNumber, r, prev)
						}
					}
					for i, m := range ms {
						holding.Delete(m.SequenceNumber)
						kind := broker.Complete
						if i%3 == 1 && m.DeliveryCount == 1 {
							kind = broker.Abandon // some go round again
						}
						if err := e.Settle(ctx, broker.Settlement{Kind: kind, Entity: "q", Token: m.LockToken}); err != nil {
							t.Errorf("settle seq %d: %v", m.SequenceNumber, err)
						}
						if kind == broker.Complete {
							completed[m.SequenceNumber].Add(1)
							done.Add(1)
						}
					}
				}
			}()
		}
		wg.Wait()
		for seq := 1; seq <= total; seq++ {
			if n := completed[seq].Load(); n != 1 {
				t.Fatalf("seq %d completed %d times", seq, n)
			}
		}
		ent, _ := e.Entity(ctx, "q")
		if ent.Counts != (broker.Counts{}) {
			t.Fatalf("counts at the end = %+v", ent.Counts)
		}
	})
}

func TestReceiveWaitsForMessages(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{})
	got := make(chan []*broker.Message, 1)
	go func() {
		ms, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: "q", Max: 5, MaxWait: time.Hour})
		if err != nil {
			t.Error(err)
		}
		got <- ms
	}()
	waitForWaiters(t, f, "q", broker.SubQueueMain, 1)
	f.sendN("q", 2)
	select {
	case ms := <-got:
		if len(ms) == 0 || ms[0].SequenceNumber != 1 {
			t.Fatalf("woken receive got %v", seqsOf(ms))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("receive was not woken by the send")
	}
}

func TestReceiveWaitEndsOnDeadlineCtxAndClose(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{})
	// MaxWait on the fake clock.
	res := make(chan error, 1)
	go func() {
		ms, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: "q", Max: 1, MaxWait: time.Minute})
		if err == nil && len(ms) != 0 {
			err = fmt.Errorf("got %d messages", len(ms))
		}
		res <- err
	}()
	waitForWaiters(t, f, "q", broker.SubQueueMain, 1)
	f.clock.Advance(time.Minute)
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("receive after MaxWait: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("MaxWait did not end the receive")
	}
	// Context cancellation.
	ctx, cancel := context.WithCancel(f.ctx)
	go func() {
		_, err := f.e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1, MaxWait: time.Hour})
		res <- err
	}()
	waitForWaiters(t, f, "q", broker.SubQueueMain, 1)
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled receive: %v", err)
	}
	// Close.
	go func() {
		_, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: "q", Max: 1, MaxWait: time.Hour})
		res <- err
	}()
	waitForWaiters(t, f, "q", broker.SubQueueMain, 1)
	f.e.Close()
	wantCode(t, <-res, broker.CodeClosed)
	wantCode(t, f.e.Send(f.ctx, "q", []*broker.Message{msg("late")}), broker.CodeClosed)
}

func TestEvents(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{LockDuration: time.Second, MaxDeliveryCount: 1})
	ch, stop := f.e.Events()
	defer stop()
	f.sendN("q", 1)
	m := f.receiveOne("q")
	f.advance(time.Second)
	want := []struct {
		kind broker.EventKind
		sub  broker.SubQueue
	}{
		{broker.EventSent, broker.SubQueueMain},
		{broker.EventLocked, broker.SubQueueMain},
		{broker.EventLockExpired, broker.SubQueueMain},
		{broker.EventDeadLettered, broker.SubQueueDeadLetter},
	}
	for i, w := range want {
		select {
		case ev := <-ch:
			if ev.Kind != w.kind || ev.SubQueue != w.sub || ev.Entity != "q" || ev.Sequence != 1 || ev.MessageID != "m1" {
				t.Fatalf("event %d = %+v, want %v in %v", i, ev, w.kind, w.sub)
			}
			if w.kind == broker.EventLockExpired && (ev.Token != m.LockToken || !ev.Time.Equal(t0.Add(time.Second))) {
				t.Fatalf("lock expired event: token %v time %v", ev.Token, ev.Time)
			}
			if w.kind == broker.EventDeadLettered && ev.Reason != broker.ReasonMaxDeliveryCountExceeded {
				t.Fatalf("dead-lettered reason %q", ev.Reason)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d (%v) missing", i, w.kind)
		}
	}
}

func TestSlowObserverDropsAndCountsMissed(t *testing.T) {
	clock := newFixture(t, store.NewMemory()).clock
	e, err := New(Options{Store: store.NewMemory(), Clock: clock, EventBuffer: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	e.CreateEntity(ctx, broker.Entity{Path: "q"})
	ch, stop := e.Events()
	fast, stopFast := e.Events()
	defer stopFast()
	// Five sends: the observer's buffer of 2 keeps the first two; three are
	// dropped without blocking the engine.
	for i := range 5 {
		if err := e.Send(ctx, "q", []*broker.Message{msg(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	<-ch
	<-ch
	e.Send(ctx, "q", []*broker.Message{msg("next")})
	ev := <-ch
	if ev.Missed != 3 || ev.MessageID != "next" {
		t.Fatalf("event after the gap: missed %d id %q, want 3 and next", ev.Missed, ev.MessageID)
	}
	e.Send(ctx, "q", []*broker.Message{msg("after")})
	if ev := <-ch; ev.Missed != 0 {
		t.Fatalf("missed must reset, got %d", ev.Missed)
	}
	stop()
	if _, open := <-ch; open {
		t.Fatal("the channel must be closed after stop")
	}
	// The other observer was unaffected until its own buffer filled.
	if ev := <-fast; ev.MessageID != "0" || ev.Missed != 0 {
		t.Fatalf("other observer: %+v", ev)
	}
}
