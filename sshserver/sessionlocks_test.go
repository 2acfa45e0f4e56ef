package sshserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// sessionQueue creates session-aware queue "s" with messages a1, a2
// (session A) and b1 (session B).
func sessionQueue(t *testing.T, e *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: "s", Kind: broker.KindQueue, Settings: broker.EntitySettings{RequiresSession: true}}); err != nil {
		t.Fatal(err)
	}
	var msgs []*broker.Message
	for _, x := range [][2]string{{"a1", "A"}, {"b1", "B"}, {"a2", "A"}} {
		msgs = append(msgs, &broker.Message{MessageID: x[0], SessionID: x[1], Body: []byte(x[0])})
	}
	if err := e.Send(ctx, "s", msgs); err != nil {
		t.Fatal(err)
	}
}

// An SSH session's client passes sessions through, audits them, keeps other
// SSH sessions off its session locks, and releases them when it closes.
func TestSessionClientSessionLocks(t *testing.T) {
	e := newEngine(t, 0)
	sessionQueue(t, e)
	var log auditLog
	c := newSessionClient(e, RoleOperator, log.logger(), "")
	other := newSessionClient(e, RoleOperator, log.logger(), "")
	ctx := context.Background()
	sc, ok := broker.SessionsOf(c)
	if !ok {
		t.Fatal("the SSH session's client hides sessions")
	}
	l, err := sc.LockSession(ctx, "s", "", 0)
	if err != nil || l.SessionID != "A" {
		t.Fatalf("lock = %+v, %v", l, err)
	}
	msgs, err := sc.ReceiveFromSession(ctx, "A", broker.ReceiveRequest{Entity: "s", Max: 5})
	if err != nil || len(msgs) != 2 || c.heldLocks() != 2 {
		t.Fatalf("receive: %d messages, %v, %d held", len(msgs), err, c.heldLocks())
	}
	// Another SSH session shares the engine's owner, but not the lock.
	if _, err := other.ReceiveFromSession(ctx, "A", broker.ReceiveRequest{Entity: "s", Max: 1}); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("other SSH session receives from A: %v", err)
	}
	if _, err := other.RenewSession(ctx, "s", "A"); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("other SSH session renews A: %v", err)
	}
	if err := other.UnlockSession(ctx, "s", "A"); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("other SSH session releases A: %v", err)
	}
	if _, err := sc.RenewSession(ctx, "s", "A"); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c.heldSessions() != 0 {
		t.Fatalf("%d session locks recorded after close", c.heldSessions())
	}
	infos, err := e.Sessions(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Locked {
			t.Fatalf("session %s still locked after close", in.SessionID)
		}
	}
	// The session is free for anyone now.
	if _, err := e.AcceptSession(ctx, 9, "s", "A", 0); err != nil {
		t.Fatalf("accept A after close: %v", err)
	}
	var ops []string
	for _, l := range log.lines(t) {
		if l["session_id"] != nil || l["op"] == "release" {
			ops = append(ops, l["op"].(string)+" "+l["result"].(string))
		}
	}
	want := []string{
		"accept session ok",
		"receive session lock lost: this SSH session holds no lock on session \"A\" (entity \"s\")",
		"renew session lock session lock lost: this SSH session holds no lock on session \"A\" (entity \"s\")",
		"release session lock session lock lost: this SSH session holds no lock on session \"A\" (entity \"s\")",
		"renew session lock ok",
		"release ok", "release ok",
		"release session lock ok",
	}
	if len(ops) != len(want) {
		t.Fatalf("audit ops = %q, want %q", ops, want)
	}
	for i := range want {
		if ops[i] != want[i] {
			t.Errorf("audit op %d = %q, want %q", i, ops[i], want[i])
		}
	}
}

// A read-only SSH session cannot accept a session.
func TestSessionClientReadOnlyRefusesSessions(t *testing.T) {
	e := newEngine(t, 0)
	sessionQueue(t, e)
	var log auditLog
	c := newSessionClient(e, RoleReadOnly, log.logger(), "")
	sc, ok := broker.SessionsOf(c)
	if !ok {
		t.Fatal("hidden")
	}
	_, err := sc.LockSession(context.Background(), "s", "", time.Second)
	if !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("lock = %v, want read-only", err)
	}
	if st, err := sc.SessionState(context.Background(), "s", "A"); err != nil || st != nil {
		t.Fatalf("state = %q, %v", st, err)
	}
}

// A dashboard over SSH that locked messages of a session and drops its
// connection gives the session lock back.
func TestDisconnectReleasesTheSessionLock(t *testing.T) {
	e := newEngine(t, 1)
	sessionQueue(t, e)
	ts := startServer(t, e, nil)
	c := ts.mustDial(ts.operator)
	term := openTerm(t, c, 120, 30)
	term.waitScreen(waitLong, "m-1")
	term.press("]")
	term.waitScreen(waitLong, "a1", "b1")
	term.press("l")
	waitUntil(t, waitLong, "the session lock", func() bool {
		infos, err := e.Sessions(context.Background(), "s")
		return err == nil && len(infos) > 0 && infos[0].SessionID == "A" && infos[0].Locked
	})
	term.waitScreen(waitLong, `SESSION "A"`)

	c.Close() // the connection drops without a quit
	waitUntil(t, waitLong, "the session lock to be released", func() bool {
		infos, err := e.Sessions(context.Background(), "s")
		return err == nil && !infos[0].Locked
	})
	if _, err := e.AcceptSession(context.Background(), 3, "s", "A", 0); err != nil {
		t.Fatalf("session A after the disconnect: %v", err)
	}
	var ops []string
	for _, l := range ts.audit.lines(t) {
		if l["session_id"] != nil {
			ops = append(ops, l["op"].(string)+" "+l["result"].(string))
		}
	}
	if want := []string{"accept session ok", "release session lock ok"}; len(ops) != 2 || ops[0] != want[0] || ops[1] != want[1] {
		t.Fatalf("session audit = %q, want %q", ops, want)
	}
}

// An SSH session receives deferred messages only of sessions it accepted;
// it audits them and records their locks, which it abandons (and then gives
// the session back) when it closes.
func TestSessionClientReceiveDeferredFromSession(t *testing.T) {
	e := newEngine(t, 0)
	sessionQueue(t, e)
	var log auditLog
	c := newSessionClient(e, RoleOperator, log.logger(), "")
	other := newSessionClient(e, RoleOperator, log.logger(), "")
	ctx := context.Background()
	sc, _ := broker.SessionsOf(c)
	if _, err := sc.LockSession(ctx, "s", "A", 0); err != nil {
		t.Fatal(err)
	}
	msgs, err := sc.ReceiveFromSession(ctx, "A", broker.ReceiveRequest{Entity: "s", Max: 1})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive = %v, %v", msgs, err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Defer, Entity: "s", Token: msgs[0].LockToken}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ReceiveDeferredFromSession(ctx, "s", "A", []int64{1}); !errors.Is(err, broker.ErrSessionLockLost) {
		t.Fatalf("other SSH session receives A's deferred message: %v", err)
	}
	if _, err := sc.ReceiveDeferredFromSession(ctx, "s", "A", []int64{2}); !errors.Is(err, broker.ErrMessageNotFound) {
		t.Fatalf("B's message through A: %v", err)
	}
	got, err := sc.ReceiveDeferredFromSession(ctx, "s", "A", []int64{1})
	if err != nil || len(got) != 1 || got[0].MessageID != "a1" || c.heldLocks() != 1 {
		t.Fatalf("deferred = %v, %v, %d held", got, err, c.heldLocks())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// The lock was abandoned and the session given back: a1 is deferred
	// again (abandoning a deferred message keeps it deferred), free for
	// anyone holding A.
	if _, err := e.AcceptSession(ctx, 9, "s", "A", 0); err != nil {
		t.Fatalf("accept A after close: %v", err)
	}
	if d, err := e.ReceiveSessionDeferred(ctx, 9, "s", "A", []int64{1}); err != nil || len(d) != 1 {
		t.Fatalf("a1 after close = %v, %v", d, err)
	}
	var ops []string
	for _, l := range log.lines(t) {
		if l["op"] == "receive deferred" || l["op"] == "release" || l["op"] == "release session lock" {
			result, _, _ := strings.Cut(l["result"].(string), " (TrackingId:")
			ops = append(ops, fmt.Sprintf("%s %v %s", l["op"], l["seq"], result))
		}
	}
	want := []string{
		`receive deferred 0 session lock lost: this SSH session holds no lock on session "A" (entity "s")`,
		`receive deferred 2 message not found: no deferred message with sequence number 2 (entity "s")`,
		"receive deferred 1 ok",
		"release 1 ok",
		"release session lock 0 ok",
	}
	if !slices.Equal(ops, want) {
		t.Fatalf("audit = %q\nwant    %q", ops, want)
	}
}
