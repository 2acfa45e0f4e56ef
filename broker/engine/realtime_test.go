package engine

import (
	"context"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// On the real clock the sweeper expires a lock of an idle entity on its own,
// and the event says so close to LockedUntil.
func TestRealTimeLockExpiryBySweeper(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		e, err := New(Options{Store: newStore()})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		ctx := context.Background()
		e.CreateEntity(ctx, broker.Entity{Path: "q", Settings: broker.EntitySettings{LockDuration: 200 * time.Millisecond, MaxDeliveryCount: 2}})
		e.Send(ctx, "q", []*broker.Message{msg("a")})
		events, stop := e.Events()
		defer stop()
		ms, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1})
		if err != nil || len(ms) != 1 {
			t.Fatal(ms, err)
		}
		timeout := time.After(5 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev.Kind != broker.EventLockExpired {
					continue
				}
				late := ev.Time.Sub(ms[0].LockedUntil)
				if ev.Token != ms[0].LockToken || late < 0 || late > time.Second {
					t.Fatalf("expiry event token %v, %v after LockedUntil", ev.Token, late)
				}
				ent, _ := e.Entity(ctx, "q")
				if ent.Counts.Active != 1 || ent.Counts.Locked != 0 {
					t.Fatalf("counts after expiry = %+v", ent.Counts)
				}
				return
			case <-timeout:
				t.Fatal("the lock did not expire within 5s")
			}
		}
	})
}

// A receive with MaxWait blocks on the real clock until a message arrives
// (woken at once, not polled) or the wait ends.
func TestRealTimeReceiveWait(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	e.CreateEntity(ctx, broker.Entity{Path: "q"})
	start := time.Now()
	ms, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1, MaxWait: 200 * time.Millisecond})
	if waited := time.Since(start); err != nil || len(ms) != 0 || waited < 200*time.Millisecond || waited > 2*time.Second {
		t.Fatalf("empty wait: %d messages, %v, waited %v", len(ms), err, waited)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		e.Send(ctx, "q", []*broker.Message{msg("late")})
	}()
	start = time.Now()
	ms, err = e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1, MaxWait: 10 * time.Second})
	if waited := time.Since(start); err != nil || len(ms) != 1 || waited > 2*time.Second {
		t.Fatalf("woken wait: %d messages, %v, waited %v", len(ms), err, waited)
	}
}

// Scheduled messages activate on the real clock without any operation.
func TestRealTimeScheduledActivation(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	e.CreateEntity(ctx, broker.Entity{Path: "q"})
	at := time.Now().Add(200 * time.Millisecond)
	if _, err := e.Schedule(ctx, "q", at, []*broker.Message{msg("s")}); err != nil {
		t.Fatal(err)
	}
	ms, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1, MaxWait: 5 * time.Second})
	if err != nil || len(ms) != 1 {
		t.Fatalf("scheduled message: %d, %v", len(ms), err)
	}
	if time.Now().Before(at) {
		t.Fatal("delivered before its scheduled time")
	}
}
