package broker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// outcome is one report of ResubmitSequences.
type outcome struct {
	seq int64
	dlq string
	err error
}

// resubmitSequences runs broker.ResubmitSequences and returns its reports.
func resubmitSequences(t *testing.T, c broker.Client, o broker.ResubmitSequencesOptions) []outcome {
	t.Helper()
	var out []outcome
	broker.ResubmitSequences(context.Background(), c, "q", o, func(seq int64, dlq string, err error) {
		out = append(out, outcome{seq, dlq, err})
	})
	return out
}

// dlqOf returns the dead-letter queue of "q" as browsed.
func dlqOf(t *testing.T, c broker.Client) []*broker.Message {
	t.Helper()
	msgs, err := c.Browse(context.Background(), broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, Max: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// wantOthersUntouched checks that the dead-letter queue holds every message
// of before but chosen, each with its delivery count and unlocked.
func wantOthersUntouched(t *testing.T, c broker.Client, before []*broker.Message, chosen int64) {
	t.Helper()
	after := dlqOf(t, c)
	if len(after) != len(before)-1 {
		t.Fatalf("%d left in the dead-letter queue, want %d", len(after), len(before)-1)
	}
	dc := map[int64]uint32{}
	for _, x := range before {
		dc[x.SequenceNumber] = x.DeliveryCount
	}
	for _, x := range after {
		if x.SequenceNumber == chosen {
			t.Fatalf("sequence number %d is still dead-lettered", chosen)
		}
		if x.DeliveryCount != dc[x.SequenceNumber] || !x.LockedUntil.IsZero() {
			t.Errorf("sequence number %d: delivery count %d (was %d), locked until %v", x.SequenceNumber, x.DeliveryCount,
				dc[x.SequenceNumber], x.LockedUntil)
		}
	}
}

// seqLocks counts the engine's receives and locks by sequence number.
type seqLocks struct {
	*engine.Engine
	mu       sync.Mutex
	receives int
	locked   [][]int64
}

func (s *seqLocks) Receive(ctx context.Context, req broker.ReceiveRequest) ([]*broker.Message, error) {
	s.mu.Lock()
	s.receives++
	s.mu.Unlock()
	return s.Engine.Receive(ctx, req)
}

func (s *seqLocks) LockSequence(ctx context.Context, entity string, seqs []int64) ([]*broker.Message, error) {
	s.mu.Lock()
	s.locked = append(s.locked, seqs)
	s.mu.Unlock()
	return s.Engine.LockSequence(ctx, entity, seqs)
}

// TestResubmitSequencesLocksOnlyTheChosen: the eighth of 15 dead-lettered
// messages is locked by its sequence number, and nothing else is.
func TestResubmitSequencesLocksOnlyTheChosen(t *testing.T) {
	e, _ := deadLettered(t, 15)
	before := dlqOf(t, e)
	chosen := before[7].SequenceNumber
	c := &seqLocks{Engine: e}
	got := resubmitSequences(t, c, broker.ResubmitSequencesOptions{Seqs: []int64{chosen},
		SeenIn: map[int64]broker.SubQueue{chosen: broker.SubQueueDeadLetter}})
	if c.receives != 0 || len(c.locked) != 1 || len(c.locked[0]) != 1 || c.locked[0][0] != chosen {
		t.Fatalf("%d receives, locks by number %v; want one lock of %d", c.receives, c.locked, chosen)
	}
	dlq := broker.SubQueueAddress("q", broker.SubQueueDeadLetter)
	if len(got) != 1 || got[0] != (outcome{chosen, dlq, nil}) {
		t.Fatalf("reports %v, want one of %d at %s without error", got, chosen, dlq)
	}
	wantOthersUntouched(t, e, before, chosen)
	if act := ids(t, e, "q", broker.CategoryActive); act != before[7].MessageID {
		t.Fatalf("resubmitted: %q", act)
	}
}

// orderLog records, in order, the receives, settlements and sends of a
// client that cannot lock by sequence number (a remote endpoint).
type orderLog struct {
	broker.Client
	mu  sync.Mutex
	ops []string
}

func (o *orderLog) add(op string) {
	o.mu.Lock()
	o.ops = append(o.ops, op)
	o.mu.Unlock()
}

func (o *orderLog) Receive(ctx context.Context, req broker.ReceiveRequest) ([]*broker.Message, error) {
	got, err := o.Client.Receive(ctx, req)
	o.add(fmt.Sprintf("receive %d of %d", len(got), req.Max))
	return got, err
}

func (o *orderLog) Settle(ctx context.Context, s broker.Settlement) error {
	o.add(s.Kind.String())
	return o.Client.Settle(ctx, s)
}

func (o *orderLog) Send(ctx context.Context, entity string, msgs []*broker.Message) error {
	o.add("send")
	return o.Client.Send(ctx, entity, msgs)
}

// TestResubmitSequencesWithoutSequenceLocks: on an endpoint that cannot
// lock by sequence number, the eighth of 15 is found by receiving the
// eight messages up to it; the seven others are given back at once with
// released (no delivery counted) before the copy is sent, and stay as
// they were.
func TestResubmitSequencesWithoutSequenceLocks(t *testing.T) {
	e, _ := deadLettered(t, 15)
	before := dlqOf(t, e)
	chosen := before[7].SequenceNumber
	o := &orderLog{Client: e}
	got := resubmitSequences(t, o, broker.ResubmitSequencesOptions{Seqs: []int64{chosen},
		SeenIn: map[int64]broker.SubQueue{chosen: broker.SubQueueDeadLetter}})
	ops := strings.Join(o.ops, ", ")
	if want := "receive 8 of 8, " + strings.Repeat("release, ", 7) + "send, complete"; ops != want {
		t.Fatalf("operations:\n got %s\nwant %s", ops, want)
	}
	if len(got) != 1 || got[0].err != nil || got[0].dlq == "" {
		t.Fatalf("reports %v", got)
	}
	wantOthersUntouched(t, e, before, chosen)
}

// TestResubmitSequencesHeldAndMissing: a message the caller holds locked
// is resubmitted as it is, one not in the dead-letter queues is reported
// not found, with no address, on both kinds of endpoint.
func TestResubmitSequencesHeldAndMissing(t *testing.T) {
	for _, seqLocking := range []bool{true, false} {
		t.Run(fmt.Sprint("sequence locks ", seqLocking), func(t *testing.T) {
			e, _ := deadLettered(t, 3)
			var c broker.Client = e
			if !seqLocking {
				c = &orderLog{Client: e}
			}
			dlq := broker.SubQueueAddress("q", broker.SubQueueDeadLetter)
			held, err := e.Receive(context.Background(), broker.ReceiveRequest{Entity: "q", SubQueue: broker.SubQueueDeadLetter, Mode: broker.PeekLock, Max: 1})
			if err != nil || len(held) != 1 {
				t.Fatalf("receive: %v", err)
			}
			got := resubmitSequences(t, c, broker.ResubmitSequencesOptions{
				Held: []broker.LockedAt{{Address: dlq, Msg: held[0]}}, Seqs: []int64{99}})
			if len(got) != 2 || got[0] != (outcome{held[0].SequenceNumber, dlq, nil}) {
				t.Fatalf("reports %v; want the held one resubmitted first", got)
			}
			if got[1].seq != 99 || got[1].dlq != "" || broker.CodeOf(got[1].err) != broker.CodeMessageNotFound {
				t.Fatalf("report of 99: %+v; want not found, no address", got[1])
			}
			if act := ids(t, e, "q", broker.CategoryActive); act != held[0].MessageID {
				t.Fatalf("resubmitted: %q", act)
			}
			if n := len(dlqOf(t, e)); n != 2 {
				t.Fatalf("%d left in the dead-letter queue, want 2", n)
			}
		})
	}
}
