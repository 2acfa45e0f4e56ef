package sshserver

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

func TestSessionClientRecordsAndReleasesLocks(t *testing.T) {
	e := newEngine(t, 3)
	var log auditLog
	sc := newSessionClient(e, RoleOperator, log.logger().With("key", "SHA256:test"), "")
	ctx := context.Background()

	msgs, err := sc.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 2})
	if err != nil || len(msgs) != 2 {
		t.Fatalf("receive: %d messages, %v; want 2, nil", len(msgs), err)
	}
	if got := sc.heldLocks(); got != 2 {
		t.Fatalf("held locks = %d, want 2", got)
	}
	if err := sc.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: msgs[0].LockToken}); err != nil {
		t.Fatalf("complete: %v", err)
	}
	if got := sc.heldLocks(); got != 1 {
		t.Fatalf("held locks after complete = %d, want 1", got)
	}
	if c := counts(t, e, "orders"); c.Active != 1 || c.Locked != 1 {
		t.Fatalf("counts before close = %+v, want Active 1 Locked 1", c)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if c := counts(t, e, "orders"); c.Active != 2 || c.Locked != 0 {
		t.Fatalf("counts after close = %+v, want Active 2 Locked 0 (the held lock released)", c)
	}
	// The released message is available again; a viewer who left is not a
	// failed delivery, so its count did not go up.
	again, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 1})
	if err != nil || len(again) != 1 || again[0].MessageID != "m-2" || again[0].DeliveryCount != 1 {
		t.Fatalf("after close the next message is %+v (%v); want m-2 with delivery count 1", again, err)
	}

	lines := log.lines(t)
	want := []struct {
		op, entity, id, result string
		seq                    float64
	}{
		{"receive", "orders", "m-1", "ok", 1},
		{"receive", "orders", "m-2", "ok", 2},
		{"complete", "orders", "m-1", "ok", 1},
		{"release", "orders", "m-2", "ok", 2},
	}
	if len(lines) != len(want) {
		t.Fatalf("audit has %d lines, want %d: %v", len(lines), len(want), lines)
	}
	for i, w := range want {
		l := lines[i]
		if l["op"] != w.op || l["entity"] != w.entity || l["message_id"] != w.id || l["result"] != w.result || l["seq"] != w.seq || l["key"] != "SHA256:test" {
			t.Errorf("audit line %d = %v, want op %q entity %q seq %v message_id %q result %q key SHA256:test", i, l, w.op, w.entity, w.seq, w.id, w.result)
		}
	}
	if lines[3]["cause"] != "session ended" {
		t.Errorf("abandon at close has cause %v, want \"session ended\"", lines[3]["cause"])
	}

	// After Close every operation fails and the shared client still works.
	if _, err := sc.Entities(ctx); !errors.Is(err, broker.ErrClosed) {
		t.Errorf("Entities after close: %v, want ErrClosed", err)
	}
	if _, err := e.Entities(ctx); err != nil {
		t.Errorf("shared client after session close: %v", err)
	}
}

func TestSessionClientCloseToleratesGoneLocks(t *testing.T) {
	e := newEngine(t, 1)
	var log auditLog
	sc := newSessionClient(e, RoleOperator, log.logger(), "")
	ctx := context.Background()
	msgs, err := sc.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 1})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %v", err)
	}
	// Settled behind the session's back, straight on the shared client.
	if err := e.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: msgs[0].LockToken}); err != nil {
		t.Fatal(err)
	}
	if err := sc.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	lines := log.lines(t)
	last := lines[len(lines)-1]
	if last["op"] != "release" || last["result"] != "ok" || last["level"] != "INFO" {
		t.Fatalf("last audit line = %v, want an ok release (the lock was already gone)", last)
	}
}

func TestSessionClientDeadLetterQueueAddress(t *testing.T) {
	e := newEngine(t, 1)
	ctx := context.Background()
	m, _ := e.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 1})
	if err := e.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: m[0].LockToken, Reason: "bad"}); err != nil {
		t.Fatal(err)
	}
	var log auditLog
	sc := newSessionClient(e, RoleOperator, log.logger(), "")
	msgs, err := sc.Receive(ctx, broker.ReceiveRequest{Entity: "orders", SubQueue: broker.SubQueueDeadLetter, Mode: broker.PeekLock, Max: 1})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive from the dead-letter queue: %v", err)
	}
	sc.Close()
	if c := counts(t, e, "orders"); c.DeadLettered != 1 || c.Active != 0 {
		t.Fatalf("counts = %+v, want the message back in the dead-letter queue", c)
	}
	lines := log.lines(t)
	if got := lines[len(lines)-1]; got["op"] != "release" || got["entity"] != "orders/$DeadLetterQueue" || got["result"] != "ok" {
		t.Fatalf("release line = %v, want an ok release on orders/$DeadLetterQueue", got)
	}
}

func TestSessionClientTransferDeadLetterQueueAddress(t *testing.T) {
	e := newEngine(t, 2)
	ctx := context.Background()
	// Dead-lettered messages cannot be forwarded to a missing queue: they go
	// to the transfer dead-letter queue.
	if err := e.UpdateEntity(ctx, broker.Entity{Path: "orders", Kind: broker.KindQueue,
		Settings: broker.EntitySettings{ForwardDeadLetteredMessagesTo: "nowhere"}}); err != nil {
		t.Fatal(err)
	}
	m, _ := e.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 2})
	for _, x := range m {
		if err := e.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: x.LockToken}); err != nil {
			t.Fatal(err)
		}
	}
	var log auditLog
	sc := newSessionClient(e, RoleOperator, log.logger(), "")
	msgs, err := sc.Receive(ctx, broker.ReceiveRequest{Entity: "orders", SubQueue: broker.SubQueueTransferDeadLetter, Mode: broker.PeekLock, Max: 1})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive from the transfer dead-letter queue: %d, %v", len(msgs), err)
	}
	if err := sc.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "orders" + broker.TransferDeadLetterSuffix, Token: msgs[0].LockToken}); err != nil {
		t.Fatal(err)
	}
	if n, err := sc.Purge(ctx, "orders", broker.SubQueueTransferDeadLetter); err != nil || n != 1 {
		t.Fatalf("purge = %d, %v", n, err)
	}
	lines := log.lines(t)
	want := []string{"receive", "complete", "purge"}
	if len(lines) != len(want) {
		t.Fatalf("audit lines = %v, want %v", lines, want)
	}
	for i, op := range want {
		if lines[i]["op"] != op || lines[i]["entity"] != "orders/$Transfer/$DeadLetterQueue" || lines[i]["result"] != "ok" {
			t.Errorf("line %d = %v, want an ok %s on orders/$Transfer/$DeadLetterQueue", i, lines[i], op)
		}
	}
}

func TestSessionClientReadOnlyRefusesAndAudits(t *testing.T) {
	e := newEngine(t, 1)
	var log auditLog
	sc := newSessionClient(e, RoleReadOnly, log.logger(), "")
	ctx := context.Background()
	if _, err := sc.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 1}); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("receive: %v, want ErrReadOnly", err)
	}
	if _, err := sc.Purge(ctx, "orders", broker.SubQueueMain); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("purge: %v, want ErrReadOnly", err)
	}
	if err := sc.Send(ctx, "orders", []*broker.Message{{MessageID: "x"}}); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("send: %v, want ErrReadOnly", err)
	}
	if got, err := sc.Browse(ctx, broker.BrowseRequest{Entity: "orders", Category: broker.CategoryActive, Max: 10}); err != nil || len(got) != 1 {
		t.Fatalf("browse: %d, %v; want 1 message", len(got), err)
	}
	if c := counts(t, e, "orders"); c.Active != 1 {
		t.Fatalf("counts = %+v, want the message untouched", c)
	}
	lines := log.lines(t)
	if len(lines) != 3 {
		t.Fatalf("audit lines = %v, want 3 refusals", lines)
	}
	for i, op := range []string{"receive", "purge", "send"} {
		if lines[i]["op"] != op || lines[i]["result"] != "read-only: "+op+" is not allowed in read-only mode" || lines[i]["level"] != "WARN" {
			t.Errorf("line %d = %v, want a refused %s", i, lines[i], op)
		}
	}
}

func TestSessionClientOwnEventSubscriptions(t *testing.T) {
	e := newEngine(t, 0)
	var log auditLog
	a := newSessionClient(e, RoleOperator, log.logger(), "")
	b := newSessionClient(e, RoleOperator, log.logger(), "")
	cha, stopA := a.Events()
	chb, _ := b.Events()
	if cha == nil || chb == nil {
		t.Fatal("no event channel")
	}
	if cha == chb {
		t.Fatal("two sessions share one subscription")
	}
	sendN(t, e, "orders", 1, 1)
	for name, ch := range map[string]<-chan broker.Event{"a": cha, "b": chb} {
		select {
		case ev := <-ch:
			if ev.Kind != broker.EventSent || ev.MessageID != "m-1" {
				t.Errorf("session %s got %v %q, want sent m-1", name, ev.Kind, ev.MessageID)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("session %s got no event", name)
		}
	}
	stopA()
	stopA() // a second stop is harmless
	// Closing b ends its subscription: the channel closes.
	b.Close()
	select {
	case _, ok := <-chb:
		for ok {
			_, ok = <-chb
		}
	case <-time.After(5 * time.Second):
		t.Fatal("b's subscription did not end at close")
	}
}

// gatedClient holds every Receive until release is closed.
type gatedClient struct {
	broker.Client
	entered chan struct{}
	release chan struct{}
}

func (g *gatedClient) Receive(ctx context.Context, req broker.ReceiveRequest) ([]*broker.Message, error) {
	close(g.entered)
	<-g.release
	return g.Client.Receive(ctx, req)
}

func TestSessionClientLateReceiveIsGivenBack(t *testing.T) {
	e := newEngine(t, 1)
	var log auditLog
	g := &gatedClient{Client: e, entered: make(chan struct{}), release: make(chan struct{})}
	sc := newSessionClient(g, RoleOperator, log.logger(), "")
	got := make(chan error, 1)
	go func() {
		_, err := sc.Receive(context.Background(), broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 1})
		got <- err
	}()
	<-g.entered
	closed := make(chan struct{})
	go func() {
		sc.Close() // the session ends while the receive is under way
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while a receive was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(g.release)
	<-closed
	// Close waited for the receive, which gave its late lock back.
	if c := counts(t, e, "orders"); c.Active != 1 || c.Locked != 0 {
		t.Fatalf("counts right after Close = %+v, want the late lock abandoned (Active 1, Locked 0)", c)
	}
	if err := <-got; err != nil {
		t.Fatalf("receive: %v", err)
	}
	if n := sc.heldLocks(); n != 0 {
		t.Fatalf("held locks = %d after close, want 0", n)
	}
}

// TestSessionClientResubmitOneAuditsWhatChanged resubmits one of 15
// dead-lettered messages through an operator session the way the
// dashboard does (lock by sequence number, send the copy, complete the
// original): the audit log has those three lines and nothing about the
// other 14, which stay as they were. A read-only session cannot lock.
func TestSessionClientResubmitOneAuditsWhatChanged(t *testing.T) {
	e := newEngine(t, 15)
	ctx := context.Background()
	got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 15})
	if err != nil || len(got) != 15 {
		t.Fatalf("receive: %v", err)
	}
	for _, m := range got {
		if err := e.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: m.LockToken, Reason: "bad"}); err != nil {
			t.Fatal(err)
		}
	}
	var log auditLog
	sc := newSessionClient(e, RoleOperator, log.logger(), "")
	sl, ok := broker.SequenceLockerOf(sc)
	if !ok {
		t.Fatal("the session client cannot lock by sequence number")
	}
	if _, isSession := sl.(*sessionClient); !isSession {
		t.Fatalf("SequenceLockerOf found %T under the session client: its locks would not be recorded", sl)
	}
	dlq := "orders" + broker.DeadLetterSuffix
	locked, err := sl.LockSequence(ctx, dlq, []int64{8})
	if err != nil || len(locked) != 1 {
		t.Fatalf("lock: %v", err)
	}
	if err := broker.Resubmit(ctx, sc, dlq, locked[0], "orders"); err != nil {
		t.Fatal(err)
	}
	sc.Close()
	var ops []string
	for _, l := range log.lines(t) {
		ops = append(ops, l["op"].(string)+" "+l["entity"].(string))
	}
	if want := []string{"lock orders/$DeadLetterQueue", "send orders", "complete orders/$DeadLetterQueue"}; strings.Join(ops, "; ") != strings.Join(want, "; ") {
		t.Fatalf("audit:\n got %v\nwant %v", ops, want)
	}
	if c := counts(t, e, "orders"); c.DeadLettered != 14 || c.Active != 1 {
		t.Fatalf("counts = %+v", c)
	}

	var roLog auditLog
	ro := newSessionClient(e, RoleReadOnly, roLog.logger(), "")
	defer ro.Close()
	if _, err := ro.LockSequence(ctx, dlq, []int64{9}); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("read-only lock: %v", err)
	}
}

// settleGate holds the first Settle until released.
type settleGate struct {
	broker.Client
	entered, release chan struct{}
	gated            atomic.Bool
}

func (g *settleGate) Settle(ctx context.Context, s broker.Settlement) error {
	if g.gated.CompareAndSwap(false, true) {
		close(g.entered)
		<-g.release
	}
	return g.Client.Settle(ctx, s)
}

// TestSessionClientCloseWaitsForSettle: a settlement under way when the
// session ends finishes before Close returns, like a receive does.
func TestSessionClientCloseWaitsForSettle(t *testing.T) {
	e := newEngine(t, 1)
	var log auditLog
	g := &settleGate{Client: e, entered: make(chan struct{}), release: make(chan struct{})}
	sc := newSessionClient(g, RoleOperator, log.logger(), "")
	msgs, err := sc.Receive(context.Background(), broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 1})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %d messages, %v", len(msgs), err)
	}
	settled := make(chan error, 1)
	go func() {
		settled <- sc.Settle(context.Background(), broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: msgs[0].LockToken})
	}()
	<-g.entered
	closed := make(chan struct{})
	go func() {
		sc.Close()
		close(closed)
	}()
	for deadline := time.Now().Add(5 * time.Second); sc.enter(); {
		sc.leave() // Close has not begun yet
		if time.Now().After(deadline) {
			t.Fatal("Close did not begin")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a settlement was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(g.release)
	<-closed
	if err := <-settled; err != nil {
		t.Fatalf("settle: %v", err)
	}
}
