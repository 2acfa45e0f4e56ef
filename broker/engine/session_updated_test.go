package engine

import (
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// Sessions reports whether a session has state and when the state was last
// set (the fake clock's time); clearing the state clears both, messages do
// not count as an update, and the time survives a restart.
func TestSessionStateUpdatedTime(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("s", broker.EntitySettings{RequiresSession: true})
		f.send("s", sessionMsg("m1", "msg"))
		set := func(f *fixture, session string, state []byte) {
			t.Helper()
			if _, err := f.e.AcceptSession(f.ctx, 1, "s", session, 0); err != nil {
				t.Fatal(err)
			}
			if err := f.e.SetSessionState(f.ctx, 1, "s", session, state); err != nil {
				t.Fatal(err)
			}
			if err := f.e.ReleaseSession(f.ctx, 1, "s", session); err != nil {
				t.Fatal(err)
			}
		}
		f.advance(time.Second)
		set(f, "a", []byte("one"))
		f.advance(time.Second)
		set(f, "b", []byte{}) // an empty state is a state
		set(f, "c", []byte("gone"))
		f.advance(time.Second)
		set(f, "a", []byte("two"))
		set(f, "c", nil)
		f.send("s", sessionMsg("m2", "b")) // a message is no update of the state

		type view struct {
			has     bool
			updated time.Time
			msgs    int
		}
		check := func(f *fixture) {
			t.Helper()
			infos, err := f.e.Sessions(f.ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]view{}
			for _, in := range infos {
				got[in.SessionID] = view{in.HasState, in.StateUpdated, in.Messages}
			}
			want := map[string]view{
				"a":   {true, t0.Add(3 * time.Second), 0},
				"b":   {true, t0.Add(2 * time.Second), 1},
				"msg": {false, time.Time{}, 1},
			}
			if len(got) != len(want) {
				t.Fatalf("sessions %+v, want %+v", got, want)
			}
			for id, w := range want {
				if g := got[id]; g.has != w.has || !g.updated.Equal(w.updated) || g.msgs != w.msgs {
					t.Errorf("session %s: %+v, want %+v", id, g, w)
				}
			}
		}
		check(f)
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		check(g)
	})
}
