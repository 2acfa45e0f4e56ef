package cli

import (
	"context"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/demo"
	"github.com/peeklock/peeklock/broker/engine"
)

// TestDemoTrafficNamesTheDemo: the demo's messages name the demo generator
// in their histories, not the dashboard.
func TestDemoTrafficNamesTheDemo(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	cfg := demo.DefaultConfig()
	stop, err := startDemo(ctx, eng, cfg, demo.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	entity := cfg.Workloads[0].Entity
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, cat := range []broker.Category{broker.CategoryActive, broker.CategoryLocked} {
			msgs, err := eng.Browse(ctx, broker.BrowseRequest{Entity: entity, Category: cat, Max: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) == 0 {
				continue
			}
			h, err := eng.History(ctx, entity, msgs[0].SequenceNumber)
			if err != nil {
				continue // settled meanwhile
			}
			for _, ev := range h.Events {
				if ev.Actor != actorDemo && ev.Actor != broker.ActorBroker {
					t.Fatalf("%s by %q, want %q", ev.Kind, ev.Actor, actorDemo)
				}
			}
			if h.Events[0].Actor == actorDemo {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no demo message in 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
