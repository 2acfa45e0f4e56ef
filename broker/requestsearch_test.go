package broker_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// searchEngine returns an engine with queues a, b and c: b holds three
// orders, then the request req-1 dead-lettered; c holds the reply (its
// CorrelationId req-1) and a message whose MessageId is its own
// CorrelationId.
func searchEngine(t *testing.T) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	e, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for _, q := range []string{"a", "b", "c"} {
		if err := e.CreateEntity(ctx, broker.Entity{Path: q, Kind: broker.KindQueue}); err != nil {
			t.Fatal(err)
		}
	}
	send := func(q string, ms ...*broker.Message) {
		if err := e.Send(ctx, q, ms); err != nil {
			t.Fatal(err)
		}
	}
	send("b", &broker.Message{MessageID: "o-1"}, &broker.Message{MessageID: "o-2"}, &broker.Message{MessageID: "o-3"})
	send("b", &broker.Message{MessageID: "req-1", ReplyTo: "c"})
	got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "b", Mode: broker.PeekLock, Max: 4})
	if err != nil || len(got) != 4 {
		t.Fatalf("receive: %d %v", len(got), err)
	}
	for _, m := range got {
		s := broker.Settlement{Kind: broker.Abandon, Entity: "b", Token: m.LockToken}
		if m.MessageID == "req-1" {
			s.Kind = broker.DeadLetter
		}
		if err := e.Settle(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	send("c", &broker.Message{MessageID: "rep-1", CorrelationID: "req-1"}, &broker.Message{MessageID: "self", CorrelationID: "self"})
	return e
}

// runSearch browses every page the search asks for until it ends, and
// returns its last step and the entities browsed, in order, once each.
func runSearch(t *testing.T, c broker.Client, s *broker.RequestSearch) (broker.RequestStep, []string) {
	t.Helper()
	var browsed []string
	for range 1000 {
		req := s.Next()
		if n := len(browsed); n == 0 || browsed[n-1] != req.Entity {
			browsed = append(browsed, req.Entity)
		}
		msgs, err := c.Browse(context.Background(), req)
		if step := s.Take(msgs, err); step.Found != nil || step.Err != nil || step.Done {
			return step, browsed
		}
	}
	t.Fatal("the search does not end")
	return broker.RequestStep{}, nil
}

// TestRequestSearchFindsTheRequest in the dead-letter queue of the second
// entity of the plan, after passing over an entity that is gone.
func TestRequestSearchFindsTheRequest(t *testing.T) {
	e := searchEngine(t)
	s := &broker.RequestSearch{CorrelationID: "req-1", FromAddress: "c", FromSequence: 1, Plan: []string{"gone", "a", "b", "c"}, Limit: 100}
	step, browsed := runSearch(t, e, s)
	if step.Found == nil || step.Found.MessageID != "req-1" || step.Entity != "b" || step.Category != broker.CategoryDeadLettered {
		t.Fatalf("step %+v", step)
	}
	if strings.Join(browsed, ",") != "gone,a,b" || s.Scanned() != 4 || s.Searched() != 3 {
		t.Fatalf("browsed %v, scanned %d, searched %d", browsed, s.Scanned(), s.Searched())
	}
}

// TestRequestSearchSkipsTheReplyItself: a message whose MessageId is its
// own CorrelationId is not its request.
func TestRequestSearchSkipsTheReplyItself(t *testing.T) {
	e := searchEngine(t)
	s := &broker.RequestSearch{CorrelationID: "self", FromAddress: "c", FromSequence: 2, Plan: []string{"a", "b", "c"}, Limit: 100}
	step, _ := runSearch(t, e, s)
	if !step.Done || step.Limited || step.Found != nil || s.Scanned() != 6 {
		t.Fatalf("step %+v, scanned %d; want not found among 6", step, s.Scanned())
	}
}

// TestRequestSearchStopsAtTheLimit between two pages, and says how far it
// came.
func TestRequestSearchStopsAtTheLimit(t *testing.T) {
	e := searchEngine(t)
	s := &broker.RequestSearch{CorrelationID: "req-1", Plan: []string{"a", "b", "c"}, Limit: 3}
	step, _ := runSearch(t, e, s)
	if !step.Done || !step.Limited || s.Scanned() != 3 || s.Searched() != 2 {
		t.Fatalf("step %+v, scanned %d, searched %d", step, s.Scanned(), s.Searched())
	}
}

// TestRequestSearchEndsOnABrowseError other than a gone entity.
func TestRequestSearchEndsOnABrowseError(t *testing.T) {
	s := &broker.RequestSearch{CorrelationID: "req-1", Plan: []string{"a", "b"}, Limit: 100}
	boom := broker.Errorf(broker.CodeUnauthorized, "no")
	step := s.Take(nil, boom)
	if !errors.Is(step.Err, boom) || step.Entity != "a" || step.Category != broker.CategoryActive {
		t.Fatalf("step %+v", step)
	}
}

// TestRequestSearchPlanPutsLikelyEntitiesFirst: the entities seen asking
// for replies in the entity or its topic come first, then every queue and
// subscription once, topics left out.
func TestRequestSearchPlanPutsLikelyEntitiesFirst(t *testing.T) {
	entities := []broker.Entity{{Path: "t", Kind: broker.KindTopic}, {Path: "t/Subscriptions/s", Kind: broker.KindSubscription},
		{Path: "orders"}, {Path: "Payments"}}
	plan, likely := broker.RequestSearchPlan("t/Subscriptions/s", map[string][]string{"t": {"payments"}}, entities)
	if strings.Join(plan, ",") != "payments,t/Subscriptions/s,orders" || likely != 1 {
		t.Fatalf("plan %v, likely %d", plan, likely)
	}
	plan, likely = broker.RequestSearchPlan("gone", nil, entities)
	if strings.Join(plan, ",") != "t/Subscriptions/s,orders,Payments,gone" || likely != 0 {
		t.Fatalf("plan %v, likely %d", plan, likely)
	}
}
