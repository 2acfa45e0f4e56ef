package model

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// dlq15 dead-letters 15 messages of orders, with delivery counts 1 to 3,
// and returns the dead-letter queue as browsed.
func dlq15(t *testing.T) (*clockwork.FakeClock, *engine.Engine, []*broker.Message) {
	t.Helper()
	clock, c := fixture(t, 15)
	ctx := context.Background()
	for i := 0; i < 15; i++ {
		got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("receive: %v", err)
		}
		if i%3 == 1 { // one failed delivery first
			if err := c.Settle(ctx, broker.Settlement{Kind: broker.Abandon, Entity: "orders", Token: got[0].LockToken}); err != nil {
				t.Fatal(err)
			}
			if got, err = c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 1}); err != nil || len(got) != 1 {
				t.Fatalf("receive: %v", err)
			}
		}
		if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: got[0].LockToken,
			Reason: "Bad", Description: fmt.Sprint("number ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	eng := c.(*engine.Engine)
	return clock, eng, browse(t, eng, "orders", broker.CategoryDeadLettered)
}

// wantOthersUntouched checks that the dead-letter queue holds every message
// of before but chosen, each with its delivery count and unlocked.
func wantOthersUntouched(t *testing.T, c broker.Client, before []*broker.Message, chosen int64) {
	t.Helper()
	after := browse(t, c, "orders", broker.CategoryDeadLettered)
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

// TestResubmitOneOfFifteenLocksOnlyIt: s on the eighth of 15 dead-lettered
// messages locks that one by its sequence number and nothing else.
func TestResubmitOneOfFifteenLocksOnlyIt(t *testing.T) {
	clock, eng, before := dlq15(t)
	c := &seqLocks{Engine: eng}
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("5")
	for range 7 {
		h.key("j")
	}
	chosen := h.cursorSeq()
	if chosen != before[7].SequenceNumber {
		t.Fatalf("cursor on %d, want %d", chosen, before[7].SequenceNumber)
	}
	h.key("s")
	if c.receives != 0 || len(c.locked) != 1 || len(c.locked[0]) != 1 || c.locked[0][0] != chosen {
		t.Fatalf("%d receives, locks by number %v; want one lock of %d", c.receives, c.locked, chosen)
	}
	wantOthersUntouched(t, eng, before, chosen)
	if act := browse(t, eng, "orders", broker.CategoryActive); len(act) != 1 || act[0].MessageID != before[7].MessageID {
		t.Fatalf("resubmitted: %v", act)
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

// TestResubmitOneWithoutSequenceLocks: on an endpoint that cannot lock by
// sequence number, s on the eighth of 15 receives the eight messages up to
// it, gives the seven others back at once with released (no delivery
// counted) before the copy is sent, and leaves them as they were.
func TestResubmitOneWithoutSequenceLocks(t *testing.T) {
	clock, eng, before := dlq15(t)
	o := &orderLog{Client: eng}
	h := newHarness(t, o, clock, Options{}, 80, 24)
	h.key("5")
	for range 7 {
		h.key("j")
	}
	chosen := h.cursorSeq()
	h.key("s")
	got := strings.Join(o.ops, ", ")
	want := "receive 8 of 8, " + strings.Repeat("release, ", 7) + "send, complete"
	if got != want {
		t.Fatalf("operations:\n got %s\nwant %s", got, want)
	}
	wantOthersUntouched(t, eng, before, chosen)
}
