package broker_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// deadLettered returns an engine whose queue "q" has n dead-lettered
// messages m-1…m-n (reason "even" or "odd"), on a fake clock.
func deadLettered(t *testing.T, n int) (*engine.Engine, *clockwork.FakeClock) {
	t.Helper()
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	e, err := engine.New(engine.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.CreateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, Settings: broker.EntitySettings{LockDuration: 30 * time.Second}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := e.Send(ctx, "q", []*broker.Message{{MessageID: fmt.Sprintf("m-%d", i), Body: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: n})
	if err != nil || len(got) != n {
		t.Fatalf("receive: %d, %v", len(got), err)
	}
	for _, m := range got {
		reason := map[bool]string{true: "even", false: "odd"}[m.SequenceNumber%2 == 0]
		if err := e.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "q", Token: m.LockToken, Reason: reason}); err != nil {
			t.Fatal(err)
		}
	}
	return e, clock
}

// ids returns the MessageIds browsed in a category, sorted.
func ids(t *testing.T, c broker.Client, entity string, cat broker.Category) string {
	t.Helper()
	msgs, err := c.Browse(context.Background(), broker.BrowseRequest{Entity: entity, Category: cat, Max: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.MessageID)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// TestResubmitFromOnlyTheGivenMessages resubmits the odd ones: they go back
// to the queue, the even ones stay dead-lettered, released (their delivery
// count unchanged), and the work stops once the wanted ones are found.
func TestResubmitFromOnlyTheGivenMessages(t *testing.T) {
	e, _ := deadLettered(t, 6)
	ctx := context.Background()
	only := map[int64]broker.SubQueue{1: broker.SubQueueDeadLetter, 3: broker.SubQueueDeadLetter}
	var done []string
	err := broker.ResubmitFrom(ctx, e, "q", broker.ResubmitOptions{Only: only, Batch: 2}, func(dlq string, m *broker.Message, err error) {
		if err != nil || dlq != "q/$DeadLetterQueue" {
			t.Errorf("%s %s: %v", dlq, m.MessageID, err)
		}
		done = append(done, m.MessageID)
	})
	if err != nil || strings.Join(done, ",") != "m-1,m-3" {
		t.Fatalf("resubmitted %v, %v", done, err)
	}
	if got := ids(t, e, "q", broker.CategoryActive); got != "m-1,m-3" {
		t.Fatalf("queue holds %s", got)
	}
	dlq, err := e.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, Max: 100})
	if err != nil || len(dlq) != 4 {
		t.Fatalf("dead-letter queue: %d, %v", len(dlq), err)
	}
	for _, m := range dlq {
		if m.Locked() || m.DeliveryCount != 1 || m.MessageID == "m-5" && m.DeadLetterReason() != "odd" {
			t.Fatalf("%s after the work: locked %v, delivery count %d", m.MessageID, m.Locked(), m.DeliveryCount)
		}
	}
}

// TestResubmitFromStopsAtMax and goes on through the transfer dead-letter
// queue otherwise.
func TestResubmitFromStopsAtMax(t *testing.T) {
	e, _ := deadLettered(t, 5)
	n := 0
	err := broker.ResubmitFrom(context.Background(), e, "q", broker.ResubmitOptions{Max: 3, Batch: 2}, func(_ string, _ *broker.Message, err error) {
		if err == nil {
			n++
		}
	})
	if err != nil || n != 3 {
		t.Fatalf("resubmitted %d, %v", n, err)
	}
	if got := ids(t, e, "q", broker.CategoryActive); got != "m-1,m-2,m-3" {
		t.Fatalf("queue holds %s", got)
	}
}

// failingSend fails the sends of one MessageId.
type failingSend struct {
	broker.Client
	id string
}

func (f failingSend) Send(ctx context.Context, entity string, msgs []*broker.Message) error {
	if msgs[0].MessageID == f.id {
		return broker.Errorf(broker.CodeServerBusy, "refused for the test")
	}
	return f.Client.Send(ctx, entity, msgs)
}

// TestResubmitFromKeepsWhatFails: a message whose copy is refused stays
// dead-lettered, is attempted once, and the work ends.
func TestResubmitFromKeepsWhatFails(t *testing.T) {
	e, _ := deadLettered(t, 4)
	var failed []string
	ok := 0
	err := broker.ResubmitFrom(context.Background(), failingSend{e, "m-2"}, "q", broker.ResubmitOptions{}, func(_ string, m *broker.Message, err error) {
		if err != nil {
			failed = append(failed, m.MessageID)
		} else {
			ok++
		}
	})
	if err != nil || ok != 3 || strings.Join(failed, ",") != "m-2" {
		t.Fatalf("ok %d, failed %v, %v", ok, failed, err)
	}
	if got := ids(t, e, "q", broker.CategoryDeadLettered); got != "m-2" {
		t.Fatalf("dead-letter queue holds %s", got)
	}
}

// renewCounter counts lock renewals and moves the clock on every receive,
// as a long run does.
type renewCounter struct {
	broker.Client
	clock   *clockwork.FakeClock
	renewed atomic.Int32
}

func (r *renewCounter) Receive(ctx context.Context, req broker.ReceiveRequest) ([]*broker.Message, error) {
	r.clock.Advance(20 * time.Second)
	return r.Client.Receive(ctx, req)
}

func (r *renewCounter) RenewLock(ctx context.Context, entity string, token broker.LockToken) (time.Time, error) {
	r.renewed.Add(1)
	return r.Client.RenewLock(ctx, entity, token)
}

// TestResubmitFromRenewsWhatItSetsAside: with a clock, the messages set
// aside keep their locks through a run longer than the lock duration, so
// none is delivered again or counted as a failed delivery.
func TestResubmitFromRenewsWhatItSetsAside(t *testing.T) {
	e, clock := deadLettered(t, 8)
	c := &renewCounter{Client: e, clock: clock}
	only := map[int64]broker.SubQueue{8: broker.SubQueueDeadLetter}
	n := 0
	err := broker.ResubmitFrom(context.Background(), c, "q", broker.ResubmitOptions{Only: only, Batch: 2, Now: clock.Now}, func(_ string, _ *broker.Message, err error) {
		if err == nil {
			n++
		}
	})
	if err != nil || n != 1 || c.renewed.Load() == 0 {
		t.Fatalf("resubmitted %d, renewed %d, %v", n, c.renewed.Load(), err)
	}
	dlq, err := e.Browse(context.Background(), broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, Max: 100})
	if err != nil || len(dlq) != 7 {
		t.Fatalf("dead-letter queue: %d, %v", len(dlq), err)
	}
	for _, m := range dlq {
		if m.DeliveryCount != 1 {
			t.Fatalf("%s: delivery count %d, want 1 (a lock ran out)", m.MessageID, m.DeliveryCount)
		}
	}
}

// TestResubmitFromEndsWhenLocksRunOut: without a clock to renew by, locks
// that run out during a long scan bring old messages back; the work ends
// when a receive gives nothing new instead of going round for ever.
func TestResubmitFromEndsWhenLocksRunOut(t *testing.T) {
	e, clock := deadLettered(t, 8)
	c := &renewCounter{Client: e, clock: clock}
	done := make(chan error, 1)
	go func() {
		done <- broker.ResubmitFrom(context.Background(), c, "q", broker.ResubmitOptions{Only: map[int64]broker.SubQueue{8: broker.SubQueueDeadLetter}, Batch: 2},
			func(string, *broker.Message, error) {})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ResubmitFrom goes round for ever while locks run out")
	}
}
