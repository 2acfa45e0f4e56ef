package engine

import (
	"errors"
	"slices"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// fanOutFixture makes a topic t of 1 MB with subscriptions a and c, which
// take messages with kind "x", and b, which takes those and also messages
// with fill set (so that it alone can be filled up).
func fanOutFixture(t *testing.T, st store.Store) *fixture {
	t.Helper()
	f := newFixture(t, st)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	kindX := broker.Rule{Name: "x", Filter: &broker.CorrelationFilter{Properties: map[string]any{"kind": "x"}}}
	fill := broker.Rule{Name: "fill", Filter: &broker.CorrelationFilter{Properties: map[string]any{"fill": true}}}
	must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic, Settings: broker.EntitySettings{MaxSizeInMegabytes: 1}}))
	must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/a", Kind: broker.KindSubscription, Rules: []broker.Rule{kindX}}))
	must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/b", Kind: broker.KindSubscription, Rules: []broker.Rule{kindX, fill}}))
	must(f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/c", Kind: broker.KindSubscription, Rules: []broker.Rule{kindX}}))
	return f
}

func kindMsg(id string, body []byte) *broker.Message {
	return &broker.Message{MessageID: id, Body: body, ApplicationProperties: map[string]any{"kind": "x"}}
}

// TestTopicSendRefusedByOneSubscription: a send that one full subscription
// refuses is stored in none of them, not even after a restart, and uses no
// sequence number.
func TestTopicSendRefusedByOneSubscription(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := fanOutFixture(t, newStore())
		big := make([]byte, 250*1024)
		for i := range 4 {
			f.send("t", &broker.Message{MessageID: "fill" + itoa(i), Body: big, ApplicationProperties: map[string]any{"fill": true}})
		}
		full := f.counts("t/Subscriptions/b")
		if full.Active != 4 {
			t.Fatalf("b has %d messages after filling, want 4", full.Active)
		}
		room := 1<<20 - full.SizeBytes
		// Two messages, the second one byte too many for b: the whole batch is refused.
		err := f.e.Send(f.ctx, "t", []*broker.Message{kindMsg("small", []byte("s")), kindMsg("over", make([]byte, room))})
		be := wantCode(t, err, broker.CodeQuotaExceeded)
		if !errors.Is(err, broker.ErrQuotaExceeded) || be.Entity != "t" {
			t.Fatalf("refusal %v names entity %q, want t", err, be.Entity)
		}
		check := func(when string) {
			t.Helper()
			for _, s := range []string{"a", "c"} {
				if c := f.counts("t/Subscriptions/" + s); c != (broker.Counts{}) {
					t.Fatalf("%s: subscription %s has %+v, want nothing", when, s, c)
				}
			}
			if c := f.counts("t/Subscriptions/b"); c != full {
				t.Fatalf("%s: subscription b has %+v, want %+v", when, c, full)
			}
		}
		check("after the refusal")
		// The store holds nothing of the refused send either.
		f.e.Close()
		f = openFixture(t, newStore(), f.clock)
		check("after a restart")
		// What fits goes to all three, with the number after the fills'.
		f.send("t", kindMsg("fits", make([]byte, room-100)))
		for _, s := range []string{"a", "b", "c"} {
			ms := f.browse("t/Subscriptions/"+s, broker.CategoryActive)
			last := ms[len(ms)-1]
			if last.MessageID != "fits" || last.SequenceNumber != 5 {
				t.Fatalf("subscription %s: last message %q seq %d, want fits seq 5", s, last.MessageID, last.SequenceNumber)
			}
		}
	})
}

// TestTopicSendRefusedForMissingSessionID: a session-aware subscription
// refuses a message without SessionId for every subscription.
func TestTopicSendRefusedForMissingSessionID(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := fanOutFixture(t, newStore())
		kindX := broker.Rule{Name: "x", Filter: &broker.CorrelationFilter{Properties: map[string]any{"kind": "x"}}}
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription,
			Settings: broker.EntitySettings{RequiresSession: true}, Rules: []broker.Rule{kindX}}); err != nil {
			t.Fatal(err)
		}
		err := f.e.Send(f.ctx, "t", []*broker.Message{kindMsg("m1", nil)})
		be := wantCode(t, err, broker.CodeInvalid)
		if be.Message != `message 0 has no SessionId but subscription "t/Subscriptions/s" requires sessions` {
			t.Fatalf("message %q", be.Message)
		}
		for _, s := range []string{"a", "b", "c", "s"} {
			if c := f.counts("t/Subscriptions/" + s); c != (broker.Counts{}) {
				t.Fatalf("subscription %s has %+v, want nothing", s, c)
			}
		}
		m := kindMsg("m2", nil)
		m.SessionID = "s1"
		f.send("t", m)
		for _, s := range []string{"a", "b", "c", "s"} {
			if ms := f.browse("t/Subscriptions/"+s, broker.CategoryActive); !slices.Equal(seqsOf(ms), []int64{1}) {
				t.Fatalf("subscription %s: seqs %v, want [1]", s, seqsOf(ms))
			}
		}
	})
}

// batchLog is a memory store that records the batches with messages in
// them and can fail the next one.
type batchLog struct {
	store.Store
	failNext bool
	batches  [][]store.Op
	hist     [][]store.HistoryOp
}

func (s *batchLog) Apply(b *store.Batch) (store.Pending, error) {
	if !slices.ContainsFunc(b.Ops, func(op store.Op) bool { return op.Kind == store.OpPutMessage }) {
		return s.Store.Apply(b)
	}
	s.batches = append(s.batches, slices.Clone(b.Ops))
	s.hist = append(s.hist, slices.Clone(b.Hist))
	if s.failNext {
		s.failNext = false
		return nil, errors.New("disk on fire")
	}
	return s.Store.Apply(b)
}

// TestTopicSendIsOneBatch: a topic send writes the topic's sequence and
// every subscription's copy, with the start of its history, in one store
// batch; when the store refuses it,
// no subscription shows the message or counts its size, and the sequence
// number is used again.
func TestTopicSendIsOneBatch(t *testing.T) {
	st := &batchLog{Store: store.NewMemory()}
	f := fanOutFixture(t, st)
	ids := map[string]uint32{}
	for _, p := range []string{"t", "t/Subscriptions/a", "t/Subscriptions/b", "t/Subscriptions/c"} {
		en, _, err := f.e.lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		ids[p] = en.id
	}
	st.failNext = true
	err := f.e.Send(f.ctx, "t", []*broker.Message{kindMsg("m1", []byte("one"))})
	if err == nil || broker.CodeOf(err) != broker.CodeUnknown {
		t.Fatalf("send on a failing store: %v, want CodeUnknown", err)
	}
	for _, s := range []string{"a", "b", "c"} {
		if c := f.counts("t/Subscriptions/" + s); c != (broker.Counts{}) {
			t.Fatalf("after the failed batch subscription %s has %+v, want nothing", s, c)
		}
	}
	f.send("t", kindMsg("m2", []byte("two")))
	if len(st.batches) != 2 {
		t.Fatalf("%d batches with messages, want 2 (one per send)", len(st.batches))
	}
	type put struct {
		kind   store.OpKind
		entity uint32
		seq    int64
	}
	// Each copy's history starts in the record that stores it.
	want := []put{
		{store.OpSetSequence, ids["t"], 1},
		{store.OpPutMessage, ids["t/Subscriptions/a"], 1},
		{store.OpPutMessage, ids["t/Subscriptions/b"], 1},
		{store.OpPutMessage, ids["t/Subscriptions/c"], 1},
	}
	wantHist := []store.HistoryKey{{Entity: ids["t/Subscriptions/a"], Seq: 1}, {Entity: ids["t/Subscriptions/b"], Seq: 1}, {Entity: ids["t/Subscriptions/c"], Seq: 1}}
	for i, ops := range st.batches {
		var got []put
		var hist []store.HistoryKey
		for _, op := range ops {
			got = append(got, put{op.Kind, op.Loc.Entity, op.Loc.Seq})
			if op.First != nil {
				hist = append(hist, store.HistoryKey{Entity: op.Loc.Entity, Seq: op.Loc.Seq})
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("batch %d: %+v, want %+v", i, got, want)
		}
		if len(st.hist[i]) != 0 {
			t.Fatalf("batch %d has history changes of their own: %+v", i, st.hist[i])
		}
		if !slices.Equal(hist, wantHist) {
			t.Fatalf("batch %d puts the history events of %+v, want %+v", i, hist, wantHist)
		}
	}
	for _, s := range []string{"a", "b", "c"} {
		ms := f.browse("t/Subscriptions/"+s, broker.CategoryActive)
		if !slices.Equal(idsOf(ms), []string{"m2"}) || !slices.Equal(seqsOf(ms), []int64{1}) {
			t.Fatalf("subscription %s: ids %v seqs %v, want [m2] [1]", s, idsOf(ms), seqsOf(ms))
		}
		if c := f.counts("t/Subscriptions/" + s); c.SizeBytes != ms[0].Size {
			t.Fatalf("subscription %s counts %d bytes, want %d", s, c.SizeBytes, ms[0].Size)
		}
	}
}
