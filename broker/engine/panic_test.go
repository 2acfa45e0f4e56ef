package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// panickyStore panics in the next Apply once armed: Apply runs under the
// entity mutex, so the panic comes from inside a locked section, as a bug
// there would.
type panickyStore struct {
	store.Store
	armed atomic.Bool
}

func (s *panickyStore) Apply(b *store.Batch) (store.Pending, error) {
	if s.armed.CompareAndSwap(true, false) {
		panic("injected store panic")
	}
	return s.Store.Apply(b)
}

// mustPanic runs fn and fails t unless it panics.
func mustPanic(t *testing.T, what string, fn func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("%s: no panic", what)
		}
	}()
	fn()
}

// TestPanicInLockedSectionReleasesEntity injects a panic inside each kind
// of locked section (a send to a queue, a topic's fan-out, a settlement, a
// receive) and checks that the entity goes on serving: the listener
// recovers panics and keeps serving, so a mutex left held would hang that
// entity for good.
func TestPanicInLockedSectionReleasesEntity(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(t *testing.T, e *Engine)
		boom  func(e *Engine, ps *panickyStore) // arms ps and panics
	}{
		{
			name: "queue send",
			boom: func(e *Engine, ps *panickyStore) {
				ps.armed.Store(true)
				_ = e.Send(ctx, "q", []*broker.Message{msg("boom")})
			},
		},
		{
			name: "topic send",
			boom: func(e *Engine, ps *panickyStore) {
				ps.armed.Store(true)
				_ = e.Send(ctx, "t", []*broker.Message{msg("boom")})
			},
		},
		{
			name: "complete",
			setup: func(t *testing.T, e *Engine) {
				if err := e.Send(ctx, "q", []*broker.Message{msg("first")}); err != nil {
					t.Fatal(err)
				}
			},
			boom: func(e *Engine, ps *panickyStore) {
				ms, _ := e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1})
				ps.armed.Store(true)
				_ = e.Settle(ctx, broker.Settlement{Entity: "q", Token: ms[0].LockToken, Kind: broker.Complete})
			},
		},
		{
			name: "receive and delete",
			setup: func(t *testing.T, e *Engine) {
				if err := e.Send(ctx, "q", []*broker.Message{msg("first")}); err != nil {
					t.Fatal(err)
				}
			},
			boom: func(e *Engine, ps *panickyStore) {
				ps.armed.Store(true)
				_, _ = e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 1, Mode: broker.ReceiveAndDelete})
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := &panickyStore{Store: store.NewMemory()}
			e, err := New(Options{Store: ps, Clock: clockwork.NewFakeClockAt(t0)})
			if err != nil {
				t.Fatal(err)
			}
			hung := false
			t.Cleanup(func() {
				if !hung {
					_ = e.Close()
				}
			})
			for _, ent := range []broker.Entity{
				{Path: "q", Kind: broker.KindQueue},
				{Path: "t", Kind: broker.KindTopic},
				{Path: "t/Subscriptions/s", Kind: broker.KindSubscription},
			} {
				if err := e.CreateEntity(ctx, ent); err != nil {
					t.Fatal(err)
				}
			}
			if c.setup != nil {
				c.setup(t, e)
			}
			mustPanic(t, c.name, func() { c.boom(e, ps) })
			ps.armed.Store(false)

			// The entities serve: a send, a receive and a completion on
			// each, within a deadline far above their cost.
			done := make(chan error, 1)
			go func() {
				for _, path := range []string{"q", "t"} {
					if err := e.Send(ctx, path, []*broker.Message{msg("after")}); err != nil {
						done <- err
						return
					}
				}
				for _, path := range []string{"q", "t/Subscriptions/s"} {
					ms, err := e.Receive(ctx, broker.ReceiveRequest{Entity: path, Max: 10})
					if err == nil && len(ms) == 0 {
						err = fmt.Errorf("nothing to receive from %s", path)
					}
					for _, m := range ms {
						if err == nil {
							err = e.Settle(ctx, broker.Settlement{Entity: path, Token: m.LockToken, Kind: broker.Complete})
						}
					}
					if err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("after the panic: %v", err)
				}
			case <-time.After(20 * time.Second):
				hung = true
				t.Fatalf("after a panic in %s the entity no longer serves: its mutex is still held", c.name)
			}
		})
	}
}
