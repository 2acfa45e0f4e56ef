package remote

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestServeScheduledDueOrder: a DueOrder browse of the Scheduled category
// lists scheduled messages by due time, then sequence number, among active
// ones (peeked past), and starts a window at the message it names (the
// remote side of the dashboard's Scheduled pane).
func TestServeScheduledDueOrder(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()
	base := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	if err := c.Send(ctx, "q", textMessages(300)); err != nil { // more than a peek page before them
		t.Fatal(err)
	}
	for _, d := range []time.Duration{3, 1, 2, 1} { // sequence numbers 301..304
		if _, err := c.Schedule(ctx, "q", base.Add(d*time.Minute), textMessages(1)); err != nil {
			t.Fatal(err)
		}
	}
	req := broker.BrowseRequest{Entity: "q", Category: broker.CategoryScheduled, Max: 10, DueOrder: true}
	got, err := c.Browse(ctx, req)
	if err != nil || !reflect.DeepEqual(seqs(got), []int64{302, 304, 303, 301}) {
		t.Fatalf("due order = %v, %v; want [302 304 303 301]", seqs(got), err)
	}
	req.FromSequence, req.Max = 304, 2
	if got, err = c.Browse(ctx, req); err != nil || !reflect.DeepEqual(seqs(got), []int64{304, 303}) {
		t.Fatalf("from 304 = %v, %v; want [304 303]", seqs(got), err)
	}
	req.DueOrder, req.FromSequence, req.Max = false, 0, 10
	if got, err = c.Browse(ctx, req); err != nil || !reflect.DeepEqual(seqs(got), []int64{301, 302, 303, 304}) {
		t.Fatalf("sequence order = %v, %v; want [301 302 303 304]", seqs(got), err)
	}
}
