package model

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// sessionEngine is an engine on a fake clock with session-aware queue
// "sess" (lock duration 30 s) holding s-1 (session A), s-2 (B), s-3 (A),
// and plain queue "orders".
func sessionEngine(t testing.TB) (*clockwork.FakeClock, *engine.Engine) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(t0)
	eng := newEngine(t, clock,
		broker.Entity{Path: "orders"},
		broker.Entity{Path: "sess", Settings: broker.EntitySettings{RequiresSession: true, LockDuration: 30 * time.Second}},
	)
	for _, x := range [][2]string{{"s-1", "A"}, {"s-2", "B"}, {"s-3", "A"}} {
		m := msg(x[0], "in "+x[1])
		m.SessionID = x[1]
		send(t, eng, "sess", m)
	}
	return clock, eng
}

// sessionInfo returns the engine's view of session id of "sess".
func sessionInfo(t testing.TB, eng *engine.Engine, id string) engine.SessionInfo {
	t.Helper()
	infos, err := eng.Sessions(context.Background(), "sess")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.SessionID == id {
			return in
		}
	}
	return engine.SessionInfo{SessionID: id}
}

// On a session-aware entity, l accepts the session of the message under the
// cursor and locks from it; the locks settle as usual; the session lock
// shows in the status bar, and when it expires its message locks are lost.
func TestFlowSessionLockExpiryLosesMessageLocks(t *testing.T) {
	clock, eng := sessionEngine(t)
	tc := newTestClock(clock)
	p := &probe{Model: New(eng, Options{Clock: tc, Entity: "sess", Theme: "dark", LockCount: 2})}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(120, 30))
	f := &flow{t: t, tm: tm, p: p, clock: tc, eng: eng}
	t.Cleanup(func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	})
	f.waitFor("1 Active 3", "s-1")
	f.press("l")
	f.waitFor("locked 2 message(s): sequence number 1, 3", "2 Locked 2", `SESSION "A" 30s`)
	if in := sessionInfo(t, eng, "A"); !in.Locked || in.Owner != 0 || !in.LockedUntil.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("session A in the engine = %+v", in)
	}
	f.press("c")
	f.waitFor("completed: sequence number 1", "2 Locked 1")
	f.advance(10 * time.Second)
	f.waitFor(`SESSION "A" 20s`)
	f.press("r") // the cursor is on s-3: the session lock that covers its lock, now until +40 s
	f.waitForText(`renewed session lock of "A" until 12:00:40, with the locks of its 1 message(s)`)
	if in := sessionInfo(t, eng, "A"); !in.LockedUntil.Equal(t0.Add(40 * time.Second)) {
		t.Fatalf("session A after r = %+v", in)
	}
	f.advance(20 * time.Second) // +30 s: s-3's own LockDuration is over; the session lock holds it
	f.waitFor(`SESSION "A" 10s`, "2 Locked 1")
	f.advance(10*time.Second + 200*time.Millisecond)
	f.waitFor("LOST", `session lock of "A" expired: its message locks are lost`)
	if strings.Contains(f.p.text(), "SESSION") {
		t.Fatalf("the session still shows after it expired:\n%s", f.p.text())
	}
	if in := sessionInfo(t, eng, "A"); in.Locked {
		t.Fatalf("session A still locked: %+v", in)
	}
	// The lost message is available again; settling it is refused.
	f.press("c")
	f.waitFor("complete: no message here")
}

// r on a row this dashboard holds no lock on renews the session lock; a
// different session under the cursor swaps the session; moving to another
// entity releases the session lock.
func TestSessionRenewSwapRelease(t *testing.T) {
	clock, eng := sessionEngine(t)
	h := newHarness(t, eng, clock, Options{Entity: "sess"}, 120, 30)
	h.key("l")
	if !strings.Contains(h.statusLine(), `SESSION "A" 30s`) {
		t.Fatalf("status = %q", h.statusLine())
	}
	h.advance(10 * time.Second)
	h.key("1") // Active: the cursor on s-2, of session B
	h.key("r")
	if in := sessionInfo(t, eng, "A"); !in.LockedUntil.Equal(t0.Add(40 * time.Second)) {
		t.Fatalf("session A after r = %+v", in)
	}
	if !strings.Contains(h.statusLine(), `renewed session lock of "A" until 12:00:40`) || !strings.Contains(h.statusLine(), `SESSION "A" 30s`) {
		t.Fatalf("status = %q", h.statusLine())
	}
	// l on s-2 gives A back (its message lock is lost) and takes B.
	h.key("l")
	if in := sessionInfo(t, eng, "A"); in.Locked {
		t.Fatalf("session A still locked: %+v", in)
	}
	if in := sessionInfo(t, eng, "B"); !in.Locked || in.Owner != 0 {
		t.Fatalf("session B = %+v", in)
	}
	if !strings.Contains(h.statusLine(), `SESSION "B" 30s`) || !strings.Contains(h.statusLine(), "locked 1 message(s): sequence number 2") {
		t.Fatalf("status = %q", h.statusLine())
	}
	if !strings.Contains(h.screen(), "LOST") {
		t.Fatalf("s-1's lock does not show as lost:\n%s", h.screen())
	}
	// Another entity: B goes back.
	h.key("[")
	if in := sessionInfo(t, eng, "B"); in.Locked {
		t.Fatalf("session B still locked after moving away: %+v", in)
	}
	if strings.Contains(h.statusLine(), "SESSION") || h.m.session != nil {
		t.Fatalf("status = %q", h.statusLine())
	}
}

// With the cursor on nothing, l takes the next available session; with no
// session available it says so; quitting releases the session lock.
func TestSessionNextAvailableAndQuit(t *testing.T) {
	clock, eng := sessionEngine(t)
	h := newHarness(t, eng, clock, Options{Entity: "sess", LockCount: 5}, 120, 30)
	h.key("4") // Scheduled: empty
	h.key("l")
	if !strings.Contains(h.statusLine(), `SESSION "A"`) || len(h.m.held) != 2 {
		t.Fatalf("status = %q, %d held", h.statusLine(), len(h.m.held))
	}
	if _, err := eng.AcceptSession(context.Background(), 5, "sess", "", 0); err != nil {
		t.Fatal(err) // B, by another receiver
	}
	h.key("4")
	h.key("l") // more of A: nothing left
	if !strings.Contains(h.statusLine(), "nothing to lock") {
		t.Fatalf("status = %q", h.statusLine())
	}
	h.m.Close()
	if in := sessionInfo(t, eng, "A"); in.Locked {
		t.Fatalf("session A still locked after Close: %+v", in)
	}
	// A is free again, B is taken: the next available session is A, for a
	// new dashboard (Close ended this one's calls).
	h = newHarness(t, eng, clock, Options{Entity: "sess", LockCount: 5}, 120, 30)
	h.key("4")
	h.key("l")
	if in := sessionInfo(t, eng, "A"); !in.Locked || !strings.Contains(h.statusLine(), `SESSION "A"`) {
		t.Fatalf("A not locked again: %+v, status %q", in, h.statusLine())
	}
	h.m.Close()
	if _, err := eng.AcceptSession(context.Background(), 6, "sess", "A", 0); err != nil {
		t.Fatalf("accept A after Close: %v", err)
	}
	// Every session is taken by others now.
	h = newHarness(t, eng, clock, Options{Entity: "sess", LockCount: 5}, 120, 30)
	h.key("4")
	h.key("l")
	if want := `timeout: no unlocked session has messages available (entity "sess")`; !strings.Contains(h.statusLine(), want) {
		t.Fatalf("status = %q, want %q", h.statusLine(), want)
	}
}

// The detail view of a message of a session-aware entity shows its
// session's state, sanitised.
func TestDetailShowsSessionState(t *testing.T) {
	clock, eng := sessionEngine(t)
	ctx := context.Background()
	if _, err := eng.AcceptSession(ctx, 9, "sess", "B", 0); err != nil {
		t.Fatal(err)
	}
	if err := eng.SetSessionState(ctx, 9, "sess", "B", []byte("step=2\x1b[2J")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, eng, clock, Options{Entity: "sess"}, 120, 40)
	h.keys("j", "enter", "G")
	scr := h.screen()
	if !strings.Contains(scr, `── Session state of "B" (10 bytes)`) || !strings.Contains(scr, "step=2") || strings.Contains(scr, "\x1b[2J") {
		t.Fatalf("detail:\n%s", scr)
	}
	// A session without state says so.
	h.keys("esc", "k", "enter", "G")
	if scr := h.screen(); !strings.Contains(scr, `── Session state of "A" (0 bytes)`) {
		t.Fatalf("detail:\n%s", scr)
	}
}

// deferAll defers every message of "sess" through another receiver (owner
// 9), session by session, and gives the sessions back.
func deferAll(t *testing.T, eng *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []string{"A", "B"} {
		if _, err := eng.AcceptSession(ctx, 9, "sess", id, 0); err != nil {
			t.Fatal(err)
		}
		msgs, err := eng.ReceiveSession(ctx, 9, id, broker.ReceiveRequest{Entity: "sess", Max: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := eng.Settle(ctx, broker.Settlement{Kind: broker.Defer, Entity: "sess", Token: m.LockToken}); err != nil {
				t.Fatal(err)
			}
		}
		if err := eng.ReleaseSession(ctx, 9, "sess", id); err != nil {
			t.Fatal(err)
		}
	}
}

// On the Deferred pane of a session-aware entity, l takes the session of
// the deferred message under the cursor and locks it by sequence number;
// a message of another session swaps the session; a selection spanning
// sessions, or reaching past the screen, is refused.
func TestSessionDeferredPaneLock(t *testing.T) {
	clock, eng := sessionEngine(t)
	deferAll(t, eng)
	h := newHarness(t, eng, clock, Options{Entity: "sess"}, 220, 30)
	h.key("3") // Deferred: s-1 (A), s-2 (B), s-3 (A)
	h.key("l")
	if in := sessionInfo(t, eng, "A"); !in.Locked || in.Owner != 0 {
		t.Fatalf("session A = %+v", in)
	}
	if st := h.statusLine(); !strings.Contains(st, `SESSION "A" 30s`) || !strings.Contains(st, "locked 1 message(s): sequence number 1") {
		t.Fatalf("status = %q", st)
	}
	if len(h.m.held) != 1 || h.m.held[heldKey{"sess", 1}] == nil {
		t.Fatalf("held = %v", h.m.held)
	}
	// s-2 (B) and s-3 (A), what is left deferred, selected: refused,
	// nothing changes.
	h.keys("3", "g", "space", "j", "space")
	h.key("l")
	want := `lock next: the selected deferred messages belong to 2 sessions ("A", "B"): lock those of one session at a time`
	if st := h.statusLine(); !strings.Contains(st, want) {
		t.Fatalf("status = %q, want %q", st, want)
	}
	if in := sessionInfo(t, eng, "A"); !in.Locked || len(h.m.held) != 1 || len(h.m.panes[2].selected) != 2 {
		t.Fatalf("after the refusal: A %+v, %d held, %d selected", in, len(h.m.held), len(h.m.panes[2].selected))
	}
	// Only s-3 selected: of the held session A, locked without a new accept.
	h.keys("g", "space")
	h.key("l")
	if st := h.statusLine(); !strings.Contains(st, "locked 1 message(s): sequence number 3") || !strings.Contains(st, `SESSION "A"`) {
		t.Fatalf("status = %q", st)
	}
	if len(h.m.held) != 2 || len(h.m.panes[2].selected) != 0 {
		t.Fatalf("%d held, %d selected", len(h.m.held), len(h.m.panes[2].selected))
	}
	// s-2 under the cursor: A goes back (its message locks are lost), B is taken.
	h.keys("3", "g")
	h.key("l")
	if in := sessionInfo(t, eng, "A"); in.Locked {
		t.Fatalf("session A still locked: %+v", in)
	}
	if in := sessionInfo(t, eng, "B"); !in.Locked || in.Owner != 0 {
		t.Fatalf("session B = %+v", in)
	}
	if st := h.statusLine(); !strings.Contains(st, `SESSION "B" 30s`) || !strings.Contains(st, "locked 1 message(s): sequence number 2") {
		t.Fatalf("status = %q", st)
	}
	// The lock settles as usual.
	h.keys("2", "g")
	h.key("c")
	if st := h.statusLine(); !strings.Contains(st, "completed: sequence number 2") {
		t.Fatalf("status = %q", st)
	}
	// A selected number that is not on screen has no known session.
	h.keys("3", "g")
	h.m.panes[2].selected[99] = true
	h.key("l")
	want = "lock next: sequence number 99 is not on screen, so its session is unknown: select deferred messages of one session on screen"
	if st := h.statusLine(); !strings.Contains(st, want) {
		t.Fatalf("status = %q, want %q", st, want)
	}
}

// Auto-renewing a message lock taken in a session keeps the session lock
// too: a minute on, both are still held, in the dashboard and the engine.
func TestFlowAutoRenewKeepsTheSessionLock(t *testing.T) {
	clock, eng := sessionEngine(t)
	tc := newTestClock(clock)
	p := &probe{Model: New(eng, Options{Clock: tc, Entity: "sess", Theme: "dark", LockCount: 1, AutoRenewFor: 5 * time.Minute})}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(120, 30))
	f := &flow{t: t, tm: tm, p: p, clock: tc, eng: eng}
	t.Cleanup(func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	})
	f.waitFor("1 Active 3", "s-1")
	f.press("l")
	f.waitFor("locked 1 message(s): sequence number 1", `SESSION "A" 30s`)
	f.press("2")
	f.waitFor("Locked 1  rows 1–1") // R needs the row under the cursor
	f.press("R")
	f.waitFor("auto-renew on for 1 lock(s)")
	for range 12 { // 60 s in steps of 5 s: each renewal has its turn
		f.advance(5 * time.Second)
	}
	f.waitFor(`SESSION "A"`, "2 Locked 1")
	if strings.Contains(f.p.text(), "LOST") {
		t.Fatalf("a lock was lost although it was auto-renewed:\n%s", f.p.text())
	}
	if in := sessionInfo(t, eng, "A"); !in.Locked || !in.LockedUntil.After(t0.Add(60*time.Second)) {
		t.Fatalf("session A in the engine after a minute = %+v; want locked past +60 s", in)
	}
}

// TestComposeSessionID: the compose dialog has a SessionId field that says
// when the entity needs one, a send to a session-aware queue carries it,
// and editing a copy keeps the original's session unless it is changed.
func TestComposeSessionID(t *testing.T) {
	clock, eng := sessionEngine(t)
	h := newHarness(t, eng, clock, Options{Entity: "sess"}, 100, 30)
	h.key("n")
	if d := h.m.dialog; d == nil || d.inputs[fSessionID].Placeholder != "required: sess uses sessions" {
		t.Fatalf("compose on a session-aware queue: %+v", d)
	}
	if !strings.Contains(h.screen(), "SessionId") {
		t.Fatal("no SessionId field on screen")
	}
	h.keys("tab", "tab", "tab")
	h.typeText("C")
	h.key("ctrl+s")
	if h.m.dialog != nil {
		t.Fatalf("compose still open: %s", h.m.dialog.err)
	}
	if in := sessionInfo(t, eng, "C"); in.Messages != 1 {
		t.Fatalf("session C: %+v, want 1 message", in)
	}

	// Edit a copy of s-1 (session A): the field shows A and the copy keeps it.
	h.key("e")
	if d := h.m.dialog; d == nil || d.value(fSessionID) != "A" {
		t.Fatalf("edit dialog SessionId = %q", h.m.dialog.value(fSessionID))
	}
	h.key("ctrl+s")
	if in := sessionInfo(t, eng, "A"); in.Messages != 3 {
		t.Fatalf("session A after the copy: %+v, want 3 messages", in)
	}

	// Elsewhere the field is optional.
	h.key("esc")
	h.m.entity = "orders"
	h.key("n")
	if d := h.m.dialog; d == nil || d.inputs[fSessionID].Placeholder != "empty: none" {
		t.Fatal("compose on a plain queue does not say SessionId is optional")
	}
}
