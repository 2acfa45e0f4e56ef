package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// t0 is the fake clock's start: a round time makes expected values readable.
var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// forEachStore runs body once per store implementation. newStore opens the
// subtest's store; calling it again after the engine was closed reopens the
// same data (the memory store is simply handed out again), which is how the
// restart tests restart.
func forEachStore(t *testing.T, body func(t *testing.T, newStore func() store.Store)) {
	t.Run("memory", func(t *testing.T) {
		m := store.NewMemory()
		body(t, func() store.Store { return m })
	})
	t.Run("pebble", func(t *testing.T) {
		dir := t.TempDir()
		body(t, func() store.Store {
			p, err := store.OpenPebble(dir, store.PebbleOptions{})
			if err != nil {
				t.Fatalf("open pebble: %v", err)
			}
			return p
		})
	})
}

// fixture is an engine on a fake clock.
type fixture struct {
	t     *testing.T
	e     *Engine
	clock *clockwork.FakeClock
	ctx   context.Context
}

func newFixture(t *testing.T, st store.Store) *fixture {
	t.Helper()
	clock := clockwork.NewFakeClockAt(t0)
	return openFixture(t, st, clock)
}

func openFixture(t *testing.T, st store.Store, clock *clockwork.FakeClock) *fixture {
	t.Helper()
	e, err := New(Options{Store: st, Clock: clock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f := &fixture{t: t, e: e, clock: clock, ctx: context.Background()}
	t.Cleanup(func() {
		_ = e.Close()
		checkNoOrphanMetas(t, st)
	})
	return f
}

// checkNoOrphanMetas fails t when the engine wrote a meta for a message the
// store did not hold (the Batch.PutMeta contract); only a memory store
// counts them.
func checkNoOrphanMetas(t *testing.T, st store.Store) {
	t.Helper()
	if m, ok := st.(*store.Memory); ok {
		if n := m.OrphanMetas(); n != 0 {
			t.Errorf("the engine wrote %d metas of messages the store did not hold", n)
		}
	}
}

// advance moves the fake clock and lets the engine process what is due.
func (f *fixture) advance(d time.Duration) {
	f.clock.Advance(d)
	f.e.Tick()
}

func (f *fixture) queue(path string, s broker.EntitySettings) {
	f.t.Helper()
	if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: path, Kind: broker.KindQueue, Settings: s}); err != nil {
		f.t.Fatalf("create queue %s: %v", path, err)
	}
}

func (f *fixture) send(path string, msgs ...*broker.Message) {
	f.t.Helper()
	if err := f.e.Send(f.ctx, path, msgs); err != nil {
		f.t.Fatalf("send to %s: %v", path, err)
	}
}

// sendN sends n messages with ids m1..mn.
func (f *fixture) sendN(path string, n int) {
	f.t.Helper()
	msgs := make([]*broker.Message, n)
	for i := range msgs {
		msgs[i] = msg(fmt.Sprintf("m%d", i+1))
	}
	f.send(path, msgs...)
}

func msg(id string) *broker.Message {
	return &broker.Message{MessageID: id, Body: []byte("body of " + id)}
}

func (f *fixture) receive(path string, max int) []*broker.Message {
	f.t.Helper()
	ms, err := f.e.Receive(f.ctx, broker.ReceiveRequest{Entity: path, Max: max})
	if err != nil {
		f.t.Fatalf("receive from %s: %v", path, err)
	}
	return ms
}

func (f *fixture) receiveOne(path string) *broker.Message {
	f.t.Helper()
	ms := f.receive(path, 1)
	if len(ms) != 1 {
		f.t.Fatalf("receive from %s: got %d messages, want 1", path, len(ms))
	}
	return ms[0]
}

func (f *fixture) settle(kind broker.SettleKind, path string, m *broker.Message) error {
	return f.e.Settle(f.ctx, broker.Settlement{Kind: kind, Entity: path, Token: m.LockToken})
}

func (f *fixture) mustSettle(kind broker.SettleKind, path string, m *broker.Message) {
	f.t.Helper()
	if err := f.settle(kind, path, m); err != nil {
		f.t.Fatalf("%s seq %d on %s: %v", kind, m.SequenceNumber, path, err)
	}
}

func (f *fixture) counts(path string) broker.Counts {
	f.t.Helper()
	ent, err := f.e.Entity(f.ctx, path)
	if err != nil {
		f.t.Fatalf("entity %s: %v", path, err)
	}
	return ent.Counts
}

// wantCounts compares the category counts (not the size).
func (f *fixture) wantCounts(path string, want broker.Counts) {
	f.t.Helper()
	got := f.counts(path)
	got.SizeBytes = 0
	if got != want {
		f.t.Fatalf("counts of %s = %+v, want %+v", path, got, want)
	}
}

func (f *fixture) browse(path string, cat broker.Category) []*broker.Message {
	f.t.Helper()
	ms, err := f.e.Browse(f.ctx, broker.BrowseRequest{Entity: path, Category: cat, Max: 1000})
	if err != nil {
		f.t.Fatalf("browse %s %s: %v", path, cat, err)
	}
	return ms
}

func seqsOf(ms []*broker.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.SequenceNumber
	}
	return out
}

func idsOf(ms []*broker.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.MessageID
	}
	return out
}

// wantCode checks that err is a *broker.Error with the code and a tracking id.
func wantCode(t *testing.T, err error, code broker.Code) *broker.Error {
	t.Helper()
	var be *broker.Error
	if !errors.As(err, &be) {
		t.Fatalf("error = %v (%T), want a *broker.Error with code %q", err, err, code)
	}
	if be.Code != code {
		t.Fatalf("error code = %q (%v), want %q", be.Code, err, code)
	}
	if be.TrackingID == "" {
		t.Fatalf("error %v has no tracking id", err)
	}
	return be
}

// waitForWaiters waits (in real time) until n receivers block on the entity.
func waitForWaiters(t *testing.T, f *fixture, path string, sub broker.SubQueue, n int) {
	t.Helper()
	en, _, err := f.e.lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		en.mu.Lock()
		got := len(en.waiters[sub].list)
		en.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters on %s, want %d", got, path, n)
		}
		time.Sleep(time.Millisecond)
	}
}
