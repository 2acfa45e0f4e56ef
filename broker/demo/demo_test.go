package demo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/demo"
	"github.com/peeklock/peeklock/broker/engine"
)

// TestDemoShowsEveryState runs a fast version of the demo on the real engine
// in real time and checks that it produces what the dashboard is meant to
// show: active, locked, deferred, scheduled and dead-lettered messages, with
// dead-lettering at the maximum delivery count among them.
func TestDemoShowsEveryState(t *testing.T) {
	e, ctx, cancel := newEngine(t)
	defer cancel()

	fast := broker.EntitySettings{LockDuration: 150 * time.Millisecond, MaxDeliveryCount: 2}
	cfg := demo.Config{
		Entities: []broker.Entity{{Path: "work", Kind: broker.KindQueue, Settings: fast}},
		Workloads: []demo.Workload{{
			Entity: "work", Receive: []string{"work"}, Rate: 300, Consumers: 2,
			Processing: [2]time.Duration{time.Millisecond, 3 * time.Millisecond},
			Mix:        demo.Mix{Complete: 30, Abandon: 10, Expire: 30, DeadLetter: 10, Defer: 20},
			Scheduled:  0.2,
		}},
	}
	if err := demo.Setup(ctx, e, cfg); err != nil {
		t.Fatal(err)
	}
	// Setup twice is fine: existing entities are left alone.
	if err := demo.Setup(ctx, e, cfg); err != nil {
		t.Fatalf("second setup: %v", err)
	}
	events, stop := e.Events()
	defer stop()
	go demo.Run(ctx, e, cfg, demo.Options{Seed: 42})

	seen := map[broker.EventKind]int{}
	maxDelivery := 0
	deadline := time.After(10 * time.Second)
	want := []broker.EventKind{broker.EventSent, broker.EventScheduled, broker.EventLocked, broker.EventCompleted,
		broker.EventAbandoned, broker.EventDeferred, broker.EventDeadLettered, broker.EventLockExpired}
	for {
		select {
		case ev := <-events:
			seen[ev.Kind]++
			if ev.Kind == broker.EventDeadLettered && ev.Reason == broker.ReasonMaxDeliveryCountExceeded {
				maxDelivery++
			}
		case <-deadline:
			t.Fatalf("after 10 s the demo produced %v and %d max-delivery dead-letterings", seen, maxDelivery)
		}
		done := maxDelivery > 0
		for _, k := range want {
			done = done && seen[k] > 0
		}
		if done {
			break
		}
	}
	ent, err := e.Entity(ctx, "work")
	if err != nil {
		t.Fatal(err)
	}
	if ent.Counts.DeadLettered == 0 {
		t.Errorf("no dead-lettered messages in the counts: %+v", ent.Counts)
	}
}

func TestDefaultConfigIsValid(t *testing.T) {
	e, ctx, cancel := newEngine(t)
	defer cancel()
	cfg := demo.DefaultConfig()
	if err := demo.Setup(ctx, e, cfg); err != nil {
		t.Fatal(err)
	}
	for _, w := range cfg.Workloads {
		for _, p := range append([]string{w.Entity}, w.Receive...) {
			ent, err := e.Entity(context.Background(), p)
			if err != nil {
				t.Fatalf("workload entity %s: %v", p, err)
			}
			if ent.Kind != broker.KindTopic && ent.Settings.LockDuration > 15*time.Second {
				t.Errorf("%s: lock duration %v; the demo needs short locks to show expiry", p, ent.Settings.LockDuration)
			}
		}
	}
}

// TestDemoSessionsAndSQLRule runs a fast session workload and a topic with a
// SQL rule: the session consumer completes messages of several sessions
// through broker.SessionClient, and the SQL subscription receives only the
// large amounts, each with the rule action's property.
func TestDemoSessionsAndSQLRule(t *testing.T) {
	e, ctx, cancel := newEngine(t)
	defer cancel()
	fast := broker.EntitySettings{LockDuration: time.Second, MaxDeliveryCount: 5}
	cfg := demo.Config{
		Entities: []broker.Entity{
			{Path: "carts", Kind: broker.KindQueue, Settings: broker.EntitySettings{LockDuration: time.Second, RequiresSession: true}},
			{Path: "events", Kind: broker.KindTopic},
			{Path: "events/Subscriptions/large", Kind: broker.KindSubscription, Settings: fast,
				Rules: []broker.Rule{{Name: "large", SQL: "amount > 300", Action: "SET priority = 'high'"}}},
		},
		Workloads: []demo.Workload{
			{Entity: "carts", Receive: []string{"carts"}, Rate: 200, Consumers: 2, Sessions: 3,
				Processing: [2]time.Duration{0, time.Millisecond}, Mix: demo.Mix{Complete: 1}},
			{Entity: "events", Rate: 200},
		},
	}
	if err := demo.Setup(ctx, e, cfg); err != nil {
		t.Fatal(err)
	}
	events, stop := e.Events()
	defer stop()
	go demo.Run(ctx, e, cfg, demo.Options{Seed: 7})

	accepted := map[string]bool{} // sessions of carts the consumer took
	completed := 0
	deadline := time.After(10 * time.Second)
	for len(accepted) < 3 || completed < 30 {
		select {
		case ev := <-events:
			switch {
			case ev.Entity != "carts":
			case ev.Kind == broker.EventLocked && ev.Sequence == 0 && strings.HasSuffix(ev.Reason, " accepted"):
				accepted[ev.Reason] = true // session "cart-2" accepted
			case ev.Kind == broker.EventCompleted:
				completed++
			}
		case <-deadline:
			t.Fatalf("after 10 s the session consumer took %v and completed %d messages", accepted, completed)
		}
	}
	cancel()
	msgs, err := e.Browse(context.Background(), broker.BrowseRequest{Entity: "events/Subscriptions/large", Category: broker.CategoryActive, Max: 100})
	if err != nil || len(msgs) == 0 {
		t.Fatalf("the SQL subscription holds %d messages (%v)", len(msgs), err)
	}
	for _, m := range msgs {
		if a, _ := m.ApplicationProperties["amount"].(float64); a <= 300 || m.ApplicationProperties["priority"] != "high" {
			t.Fatalf("message %d in the SQL subscription: amount %v, priority %v", m.SequenceNumber, m.ApplicationProperties["amount"], m.ApplicationProperties["priority"])
		}
	}
}

// TestMaxBacklogPausesTheProducer runs a producer without consumers: it must
// stop at exactly MaxBacklog waiting messages, and go on once some leave.
func TestMaxBacklogPausesTheProducer(t *testing.T) {
	e, ctx, cancel := newEngine(t)
	defer cancel()
	cfg := demo.Config{
		Entities:  []broker.Entity{{Path: "work", Kind: broker.KindQueue}},
		Workloads: []demo.Workload{{Entity: "work", Receive: []string{"work"}, Rate: 500, MaxBacklog: 20}},
	}
	if err := demo.Setup(ctx, e, cfg); err != nil {
		t.Fatal(err)
	}
	go demo.Run(ctx, e, cfg, demo.Options{Seed: 1})
	active := func() int64 {
		ent, err := e.Entity(ctx, "work")
		if err != nil {
			t.Fatal(err)
		}
		return ent.Counts.Active
	}
	waitFor := func(want int64) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); active() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("active = %d, want %d", active(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(20)
	time.Sleep(100 * time.Millisecond) // 50 more ticks at 500/s
	if n := active(); n != 20 {
		t.Fatalf("active = %d after the backlog was full, want 20", n)
	}
	if _, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "work", Mode: broker.ReceiveAndDelete, Max: 5}); err != nil {
		t.Fatal(err)
	}
	waitFor(20)
}

// newEngine returns an in-memory engine, closed when the test ends, and a
// context for the demo that cancel ends.
func newEngine(t *testing.T) (*engine.Engine, context.Context, context.CancelFunc) {
	t.Helper()
	e, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	return e, ctx, cancel
}

// TestMaxDeadLetteredTrimsTheOldest: a dead-letter queue beyond
// MaxDeadLettered is trimmed to it, the oldest going first; the default
// demo bounds every queue and dead-letter queue it fills.
func TestMaxDeadLetteredTrimsTheOldest(t *testing.T) {
	e, ctx, cancel := newEngine(t)
	defer cancel()
	cfg := demo.Config{
		Entities:  []broker.Entity{{Path: "work", Kind: broker.KindQueue}},
		Workloads: []demo.Workload{{Entity: "work", Receive: []string{"work"}, MaxDeadLettered: 10}},
	}
	if err := demo.Setup(ctx, e, cfg); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		if err := e.Send(ctx, "work", []*broker.Message{{MessageID: "m"}}); err != nil {
			t.Fatal(err)
		}
		got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "work", Max: 1})
		if err != nil || len(got) != 1 {
			t.Fatal(err)
		}
		if err := e.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "work", Token: got[0].LockToken}); err != nil {
			t.Fatal(err)
		}
	}
	go demo.Run(ctx, e, cfg, demo.Options{Seed: 1})
	for deadline := time.Now().Add(8 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ent, err := e.Entity(ctx, "work")
		if err != nil {
			t.Fatal(err)
		}
		if ent.Counts.DeadLettered == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dead-lettered = %d, want trimmed to 10", ent.Counts.DeadLettered)
		}
	}
	left, err := e.Browse(ctx, broker.BrowseRequest{Entity: "work", Category: broker.CategoryDeadLettered, Max: 100})
	if err != nil || len(left) != 10 || left[0].SequenceNumber != 21 {
		t.Fatalf("left %d, first %d; want the newest 10 (21…30)", len(left), left[0].SequenceNumber)
	}
	for _, w := range demo.DefaultConfig().Workloads {
		if w.MaxBacklog <= 0 || w.MaxDeadLettered <= 0 {
			t.Errorf("the default demo's %s is unbounded: backlog %d, dead-lettered %d", w.Entity, w.MaxBacklog, w.MaxDeadLettered)
		}
	}
}
