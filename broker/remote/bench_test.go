package remote

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// fill sends n small messages to entity straight into the engine.
func (e *serveEnv) fill(tb testing.TB, entity string, n int) {
	tb.Helper()
	const batch = 1000
	msgs := make([]*broker.Message, 0, batch)
	for i := 0; i < n; i++ {
		msgs = append(msgs, &broker.Message{MessageID: fmt.Sprintf("id-%d", i), ContentType: "application/json", Body: []byte(`{"order":1234,"item":"widget"}`)})
		if len(msgs) == batch || i == n-1 {
			if err := e.eng.Send(context.Background(), entity, msgs); err != nil {
				tb.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
}

// BenchmarkFirstScreen1M measures what the dashboard does before it can
// draw on a 1,000,000-message queue: connect, list entities with counts,
// and browse one pane window of 40. Target: 200 ms.
func BenchmarkFirstScreen1M(b *testing.B) {
	env := newServe(b, nil)
	env.queue("big", broker.EntitySettings{})
	env.fill(b, "big", 1_000_000)
	cfg := env.config("")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx := context.Background()
		c, err := Dial(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		ents, err := c.Entities(ctx)
		if err != nil || len(ents) != 1 || ents[0].Counts.Active != 1_000_000 {
			b.Fatalf("Entities = %+v, %v", ents, err)
		}
		page, err := c.Browse(ctx, broker.BrowseRequest{Entity: "big", Category: broker.CategoryActive, FromSequence: 500_000, Max: 40})
		if err != nil || len(page) != 40 || page[0].SequenceNumber != 500_000 {
			b.Fatalf("Browse = %d messages, %v", len(page), err)
		}
		b.StopTimer()
		_ = c.Close()
		b.StartTimer()
	}
}

// BenchmarkComplete1000 measures completing 1,000 received messages with
// settlements in flight concurrently, as the dashboard's bulk complete
// does. Target: 1 s.
func BenchmarkComplete1000(b *testing.B) {
	env := newServe(b, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		env.fill(b, "q", 1000)
		var msgs []*broker.Message
		for len(msgs) < 1000 {
			got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 1000 - len(msgs), MaxWait: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			msgs = append(msgs, got...)
		}
		b.StartTimer()
		settleAll(b, c, msgs, 64)
	}
}

// settleAll completes msgs with n workers.
func settleAll(tb testing.TB, c *Client, msgs []*broker.Message, n int) {
	work := make(chan *broker.Message)
	errs := make(chan error, len(msgs))
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				errs <- c.Settle(context.Background(), broker.Settlement{Kind: broker.Complete, Entity: "q", Token: m.LockToken})
			}
		}()
	}
	for _, m := range msgs {
		work <- m
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// TestComplete1000Concurrently checks the bulk path that the benchmark
// times: 1,000 locks settled by 64 workers, all completed.
func TestComplete1000Concurrently(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()
	env.fill(t, "q", 1000)
	var msgs []*broker.Message
	for try := 0; len(msgs) < 1000; try++ {
		if try == 20 {
			t.Fatalf("received %d of 1000 messages in 20 receives", len(msgs))
		}
		got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 1000 - len(msgs), MaxWait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, got...)
	}
	start := time.Now()
	settleAll(t, c, msgs, 64)
	t.Logf("completed 1000 in %v", time.Since(start))
	ents, err := c.Entities(ctx)
	if err != nil || ents[0].Counts != (broker.Counts{}) {
		t.Fatalf("counts after completing all = %+v, %v", ents[0].Counts, err)
	}
}
