package broker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// slowFirstSend holds back the send of the copy of m-1 until another send
// was accepted (or, when none comes, a moment): resubmits that send
// concurrently then put another copy first; resubmits that keep the order
// wait for m-1's.
type slowFirstSend struct {
	broker.Client
	once    sync.Once
	another chan struct{}
}

func newSlowFirstSend(c broker.Client) *slowFirstSend {
	return &slowFirstSend{Client: c, another: make(chan struct{})}
}

func (s *slowFirstSend) Send(ctx context.Context, entity string, msgs []*broker.Message) error {
	if msgs[0].MessageID == "m-1" {
		select {
		case <-s.another:
		case <-time.After(300 * time.Millisecond):
		}
		return s.Client.Send(ctx, entity, msgs)
	}
	err := s.Client.Send(ctx, entity, msgs)
	s.once.Do(func() { close(s.another) })
	return err
}

// slowFirstSendLocking is slowFirstSend on an endpoint that locks by
// sequence number (the embedded engine).
type slowFirstSendLocking struct {
	*slowFirstSend
	e *engine.Engine
}

func (s slowFirstSendLocking) LockSequence(ctx context.Context, entity string, seqs []int64) ([]*broker.Message, error) {
	return s.e.LockSequence(ctx, entity, seqs)
}

// activeOrder returns the MessageIds of q's active messages in sequence
// order.
func activeOrder(t *testing.T, c broker.Client) string {
	t.Helper()
	msgs, err := c.Browse(context.Background(), broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.MessageID)
	}
	return strings.Join(out, ",")
}

func inOrder(n int) string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("m-%d", i))
	}
	return strings.Join(out, ",")
}

// TestResubmitKeepsTheDeadLetterOrder: 50 dead letters resubmitted with
// concurrency 8 (the command line's resubmit and the dashboard's S) arrive
// in the dead-letter queue's sequence order, although the first copy's send
// is the slowest.
func TestResubmitKeepsTheDeadLetterOrder(t *testing.T) {
	const n = 50
	t.Run("all (peeklock resubmit)", func(t *testing.T) {
		e, _ := deadLettered(t, n)
		c := newSlowFirstSend(e)
		err := broker.ResubmitFrom(context.Background(), c, "q", broker.ResubmitOptions{Concurrency: 8}, func(_ string, m *broker.Message, err error) {
			if err != nil {
				t.Errorf("%s: %v", m.MessageID, err)
			}
		})
		if got := activeOrder(t, e); err != nil || got != inOrder(n) {
			t.Fatalf("resubmitted in the order\n%s\nwant\n%s (%v)", got, inOrder(n), err)
		}
	})
	for _, locking := range []bool{true, false} {
		t.Run(fmt.Sprint("chosen (S), sequence locks ", locking), func(t *testing.T) {
			e, _ := deadLettered(t, n)
			slow := newSlowFirstSend(e)
			var c broker.Client = slow
			if locking {
				c = slowFirstSendLocking{slow, e}
			}
			dlq := dlqOf(t, e)
			held, err := e.Receive(context.Background(), broker.ReceiveRequest{Entity: "q", SubQueue: broker.SubQueueDeadLetter, Mode: broker.PeekLock, Max: 1})
			if err != nil || len(held) != 1 {
				t.Fatalf("receive: %v", err)
			}
			var seqs []int64
			for _, m := range dlq[1:] {
				seqs = append(seqs, m.SequenceNumber)
			}
			rand.Shuffle(len(seqs), func(i, j int) { seqs[i], seqs[j] = seqs[j], seqs[i] })
			got := resubmitSequences(t, c, broker.ResubmitSequencesOptions{Concurrency: 8, Seqs: seqs,
				Held: []broker.LockedAt{{Address: "q/$DeadLetterQueue", Msg: held[0]}}})
			for _, o := range got {
				if o.err != nil {
					t.Errorf("%d: %v", o.seq, o.err)
				}
			}
			if order := activeOrder(t, e); len(got) != n || order != inOrder(n) {
				t.Fatalf("%d resubmitted, in the order\n%s\nwant\n%s", len(got), order, inOrder(n))
			}
		})
	}
}
