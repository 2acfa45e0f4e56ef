package engine

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// storedRecords is what a store holds besides entities and messages.
type storedRecords struct {
	states map[string]string // "entity/session" -> state
	dups   []store.DuplicateRecord
}

func (r *storedRecords) Entity(store.EntityRecord) error     { return nil }
func (r *storedRecords) Sequence(uint32, int64) error        { return nil }
func (r *storedRecords) Message(store.Loc, store.Meta) error { return nil }
func (r *storedRecords) SessionState(id uint32, session string, state []byte, _ int64) error {
	r.states[itoa(int(id))+"/"+session] = string(state)
	return nil
}
func (r *storedRecords) Duplicate(d store.DuplicateRecord) error {
	r.dups = append(r.dups, d)
	return nil
}

// records loads a closed engine's store (a Pebble store is opened again,
// and closed).
func records(t *testing.T, newStore func() store.Store) storedRecords {
	t.Helper()
	st := newStore()
	defer st.Close()
	r := storedRecords{states: map[string]string{}}
	if err := st.Load(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) restart(newStore func() store.Store) *fixture {
	f.t.Helper()
	if err := f.e.Close(); err != nil {
		f.t.Fatal(err)
	}
	return openFixture(f.t, newStore(), f.clock)
}

func TestSessionStateSurvivesRestart(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("s", broker.EntitySettings{RequiresSession: true, LockDuration: time.Minute})
		f.send("s", sessionMsg("a1", "A"))
		if _, err := f.e.AcceptSession(f.ctx, 1, "s", "A", 0); err != nil {
			t.Fatal(err)
		}
		if err := f.e.SetSessionState(f.ctx, 1, "s", "A", []byte("first")); err != nil {
			t.Fatal(err)
		}
		if err := f.e.SetSessionState(f.ctx, 1, "s", "A", []byte("step 2")); err != nil {
			t.Fatal(err)
		}
		// The session's messages go; its state stays.
		ms, err := f.e.ReceiveSession(f.ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 1})
		if err != nil || len(ms) != 1 {
			t.Fatalf("receive = %v, %v", ms, err)
		}
		f.mustSettle(broker.Complete, "s", ms[0])
		// B's state is set and cleared before the restart.
		if _, err := f.e.AcceptSession(f.ctx, 2, "s", "B", 0); err != nil {
			t.Fatal(err)
		}
		if err := f.e.SetSessionState(f.ctx, 2, "s", "B", []byte("b")); err != nil {
			t.Fatal(err)
		}
		if err := f.e.SetSessionState(f.ctx, 2, "s", "B", nil); err != nil {
			t.Fatal(err)
		}

		g := f.restart(newStore)
		got, err := g.e.SessionState(g.ctx, "s", "A")
		if err != nil || string(got) != "step 2" {
			t.Fatalf("state of A after restart = %q, %v; want \"step 2\"", got, err)
		}
		if got, err := g.e.SessionState(g.ctx, "s", "B"); err != nil || got != nil {
			t.Fatalf("state of B after restart = %q, %v; want nil", got, err)
		}
		infos, err := g.e.Sessions(g.ctx, "s")
		if err != nil || len(infos) != 1 || infos[0].SessionID != "A" || infos[0].StateSize != 6 || infos[0].Messages != 0 || infos[0].Locked {
			t.Fatalf("sessions after restart = %+v, %v", infos, err)
		}
		// The receiver that accepts A reads it; setting nil deletes it for good.
		if _, err := g.e.AcceptSession(g.ctx, 3, "s", "A", 0); err != nil {
			t.Fatal(err)
		}
		if got, err := g.e.HeldSessionState(g.ctx, 3, "s", "A"); err != nil || string(got) != "step 2" {
			t.Fatalf("held state = %q, %v", got, err)
		}
		if err := g.e.SetSessionState(g.ctx, 3, "s", "A", nil); err != nil {
			t.Fatal(err)
		}

		h := g.restart(newStore)
		if got, err := h.e.SessionState(h.ctx, "s", "A"); err != nil || got != nil {
			t.Fatalf("state of A after clearing and restart = %q, %v; want nil", got, err)
		}
		if infos, err := h.e.Sessions(h.ctx, "s"); err != nil || len(infos) != 0 {
			t.Fatalf("sessions after clearing = %+v, %v; want none", infos, err)
		}
		if err := h.e.Close(); err != nil {
			t.Fatal(err)
		}
		if r := records(t, newStore); len(r.states) != 0 {
			t.Fatalf("stored states = %v, want none", r.states)
		}
	})
}

func TestDuplicateHistorySurvivesRestart(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: 10 * time.Minute})
		f.send("q", msg("a"), msg("b"))
		f.mustSettle(broker.Complete, "q", f.receiveOne("q")) // a: completed, only its record remains
		f.advance(5 * time.Minute)

		g := f.restart(newStore)
		seqs, err := g.e.Schedule(g.ctx, "q", t0, []*broker.Message{msg("a"), msg("b"), msg("c")})
		if err != nil || !slices.Equal(seqs, []int64{0, 0, 3}) {
			t.Fatalf("send after restart = %v, %v; want [0 0 3]", seqs, err)
		}
		g.advance(5*time.Minute - time.Nanosecond) // the window of a and b ends at t0+10m
		h := g.restart(newStore)
		seqs, err = h.e.Schedule(h.ctx, "q", t0, []*broker.Message{msg("a")})
		if err != nil || !slices.Equal(seqs, []int64{0}) {
			t.Fatalf("send 1ns before the window ends = %v, %v; want [0]", seqs, err)
		}
		h.advance(time.Nanosecond)
		seqs, err = h.e.Schedule(h.ctx, "q", t0, []*broker.Message{msg("a"), msg("b"), msg("c")})
		if err != nil || !slices.Equal(seqs, []int64{4, 5, 0}) {
			t.Fatalf("send after the window = %v, %v; want [4 5 0]", seqs, err)
		}
		if err := h.e.Close(); err != nil {
			t.Fatal(err)
		}
		// The expired records of a and b were deleted, the new ones stored.
		at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
		want := []store.DuplicateRecord{{Entity: 1, ID: "c", End: at(15 * time.Minute)},
			{Entity: 1, ID: "a", End: at(20 * time.Minute)}, {Entity: 1, ID: "b", End: at(20 * time.Minute)}}
		if r := records(t, newStore); !slices.Equal(r.dups, want) {
			t.Fatalf("stored records = %v, want %v", r.dups, want)
		}
	})
}

func TestExpiredDuplicateRecordsDeletedAtLoad(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: time.Minute})
		f.queue("forever", broker.EntitySettings{RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: broker.MaxTimeToLive})
		f.send("q", msg("a"))
		f.send("forever", msg("f"))
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Hour) // while stopped
		g := openFixture(t, newStore(), f.clock)
		if err := g.e.Close(); err != nil {
			t.Fatal(err)
		}
		want := []store.DuplicateRecord{{Entity: 2, ID: "f", End: math.MaxInt64}}
		if r := records(t, newStore); !slices.Equal(r.dups, want) {
			t.Fatalf("stored records after a load past the window = %v, want %v", r.dups, want)
		}
		h := openFixture(t, newStore(), f.clock)
		seqs, err := h.e.Schedule(h.ctx, "q", t0, []*broker.Message{msg("a")})
		if err != nil || !slices.Equal(seqs, []int64{2}) {
			t.Fatalf("send to q = %v, %v; want [2]", seqs, err)
		}
		seqs, err = h.e.Schedule(h.ctx, "forever", t0, []*broker.Message{msg("f")})
		if err != nil || !slices.Equal(seqs, []int64{0}) {
			t.Fatalf("send to forever = %v, %v; want [0]", seqs, err)
		}
	})
}

func TestTopicDuplicateHistorySurvivesRestart(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic,
			Settings: broker.EntitySettings{RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: time.Minute}}); err != nil {
			t.Fatal(err)
		}
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription}); err != nil {
			t.Fatal(err)
		}
		f.send("t", msg("a"))
		f.mustSettle(broker.Complete, "t/Subscriptions/s", f.receiveOne("t/Subscriptions/s"))
		f.advance(30 * time.Second)

		g := f.restart(newStore)
		seqs, err := g.e.Schedule(g.ctx, "t", t0, []*broker.Message{msg("a"), msg("b")})
		if err != nil || !slices.Equal(seqs, []int64{0, 2}) {
			t.Fatalf("send to the topic after restart = %v, %v; want [0 2]", seqs, err)
		}
		g.wantCounts("t/Subscriptions/s", broker.Counts{Active: 1})
		g.advance(30 * time.Second) // a's window ends, b's has 30s to go
		h := g.restart(newStore)
		seqs, err = h.e.Schedule(h.ctx, "t", t0, []*broker.Message{msg("a"), msg("b")})
		if err != nil || !slices.Equal(seqs, []int64{3, 0}) {
			t.Fatalf("send to the topic after a's window = %v, %v; want [3 0]", seqs, err)
		}
	})
}

func TestDeleteEntityDeletesStateAndHistory(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("s", broker.EntitySettings{RequiresSession: true, RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: time.Hour})
		f.queue("keep", broker.EntitySettings{RequiresSession: true, RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: time.Hour})
		for _, q := range []string{"s", "keep"} {
			f.send(q, sessionMsg("m", "A"))
			if _, err := f.e.AcceptSession(f.ctx, 1, q, "A", 0); err != nil {
				t.Fatal(err)
			}
			if err := f.e.SetSessionState(f.ctx, 1, q, "A", []byte(q)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.e.DeleteEntity(f.ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		r := records(t, newStore)
		if want := map[string]string{"2/A": "keep"}; len(r.states) != 1 || r.states["2/A"] != "keep" {
			t.Fatalf("stored states = %v, want %v", r.states, want)
		}
		if want := []store.DuplicateRecord{{Entity: 2, ID: "m", End: t0.Add(time.Hour).UnixNano()}}; !slices.Equal(r.dups, want) {
			t.Fatalf("stored records = %v, want %v", r.dups, want)
		}
		// A new entity of the same name starts with neither.
		g := openFixture(t, newStore(), f.clock)
		g.queue("s", broker.EntitySettings{RequiresSession: true, RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: time.Hour})
		g.send("s", sessionMsg("m", "A"))
		g.wantCounts("s", broker.Counts{Active: 1})
		if got, err := g.e.SessionState(g.ctx, "s", "A"); err != nil || got != nil {
			t.Fatalf("state of the new s = %q, %v; want nil", got, err)
		}
	})
}

// TestDuplicateHistoryOfOldStore: a store written before the history was
// stored holds the messages only; the ids of those still within their
// window are duplicates after a restart, as before.
func TestDuplicateHistoryOfOldStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: time.Minute})
		f.send("q", msg("a"))
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		// Remove the record: what an older build left.
		st := newStore()
		var b store.Batch
		b.DeleteDuplicate(store.DuplicateRecord{Entity: 1, ID: "a", End: t0.Add(time.Minute).UnixNano()})
		if p, err := st.Apply(&b); err != nil || p.Wait() != nil {
			t.Fatalf("apply: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if r := records(t, newStore); len(r.dups) != 0 {
			t.Fatalf("records left: %v", r.dups)
		}
		g := openFixture(t, newStore(), f.clock)
		seqs, err := g.e.Schedule(g.ctx, "q", t0, []*broker.Message{msg("a"), msg("b")})
		if err != nil || !slices.Equal(seqs, []int64{0, 2}) {
			t.Fatalf("send after restart = %v, %v; want [0 2]", seqs, err)
		}
		g.advance(time.Minute)
		seqs, err = g.e.Schedule(g.ctx, "q", t0, []*broker.Message{msg("a")})
		if err != nil || !slices.Equal(seqs, []int64{3}) {
			t.Fatalf("send after the window = %v, %v; want [3]", seqs, err)
		}
	})
}
