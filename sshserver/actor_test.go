package sshserver

import (
	"context"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// TestSessionNamesItsUser: what an SSH session does is in the message's
// history under the session's user and key, not "dashboard", and the
// audit line of a resubmit names the copy's new sequence number.
func TestSessionNamesItsUser(t *testing.T) {
	e := newEngine(t, 1)
	var log auditLog
	id := identity{Fingerprint: "SHA256:abc", Comment: "alice@laptop"}
	sc := newSessionClient(e, RoleOperator, log.logger(), id.actor("alice"))
	defer sc.Close()
	ctx := context.Background()
	msgs, err := sc.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 1})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %v", err)
	}
	if err := sc.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: msgs[0].LockToken, Reason: "r"}); err != nil {
		t.Fatal(err)
	}
	dlq := broker.SubQueueAddress("orders", broker.SubQueueDeadLetter)
	h, err := e.History(ctx, dlq, msgs[0].SequenceNumber)
	if err != nil {
		t.Fatal(err)
	}
	want := `ssh alice (key SHA256:abc, "alice@laptop")`
	for _, ev := range h.Events[1:] { // the first is the test's own send
		if ev.Actor != want {
			t.Errorf("%s by %q, want %q", ev.Kind, ev.Actor, want)
		}
	}

	var outcome error
	broker.ResubmitSequences(ctx, sc, "orders", broker.ResubmitSequencesOptions{Seqs: []int64{msgs[0].SequenceNumber}}, func(_ int64, _ string, err error) { outcome = err })
	if outcome != nil {
		t.Fatal(outcome)
	}
	var line map[string]any
	for _, l := range log.lines(t) {
		if l["op"] == "send" {
			line = l
		}
	}
	if line == nil || line["from_seq"] != float64(msgs[0].SequenceNumber) || line["copy_seq"] != float64(2) || line["from"] != dlq {
		t.Fatalf("resubmit audit line %v; want from %s seq %d and copy_seq 2", line, dlq, msgs[0].SequenceNumber)
	}
}
