package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// TestHistoryCommand: `peeklock history` prints a message's history from
// the store as a table and as JSON, strips escape sequences from what
// clients named themselves, and fails for a settled message and for bad
// arguments.
func TestHistoryCommand(t *testing.T) {
	dir := t.TempDir()
	e := openStore(t, dir)
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: "orders", Kind: broker.KindQueue}); err != nil {
		t.Fatal(err)
	}
	app := e.As("connection 1f link \x1b[31mred\x1b[0m")
	if err := app.Send(ctx, "orders", []*broker.Message{{MessageID: "m-1"}, {MessageID: "m-2"}}); err != nil {
		t.Fatal(err)
	}
	ms, err := app.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Max: 2})
	if err != nil || len(ms) != 2 {
		t.Fatalf("receive: %v %v", ms, err)
	}
	if err := app.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: ms[0].LockToken, Reason: "poison"}); err != nil {
		t.Fatal(err)
	}
	if err := app.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: ms[1].LockToken}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, "", nil, "history", "orders/$DeadLetterQueue", "1", "--data", dir)
	if r.status != 0 {
		t.Fatalf("history: status %d, %s", r.status, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "TIME") {
		t.Fatalf("table:\n%s", r.stdout)
	}
	for i, want := range []string{"sent", "locked", "dead-lettered"} {
		if !strings.Contains(lines[i+1], want) || !strings.Contains(lines[i+1], "connection 1f link ") {
			t.Errorf("line %d = %q, want %q by the connection", i+1, lines[i+1], want)
		}
	}
	if strings.Contains(r.stdout, "\x1b") || !strings.Contains(lines[3], "poison") {
		t.Errorf("table:\n%q", r.stdout)
	}

	r = runCLI(t, "", nil, "history", "orders", "1", "--data", dir, "-o", "json")
	var h historyJSON
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil || r.status != 0 {
		t.Fatalf("json: %v, status %d: %s %s", err, r.status, r.stdout, r.stderr)
	}
	if h.Entity != "orders" || h.SequenceNumber != 1 || len(h.Events) != 3 || h.Events[2].Reason != "poison" ||
		h.Events[1].LockToken == "" || h.Events[1].LockedUntil == nil || h.Events[2].SubQueue != broker.SubQueueDeadLetter.String() {
		t.Errorf("json: %+v", h)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "orders", "2", "--data", dir}, "no stored message with sequence number 2"},
		{[]string{"history", "orders", "--data", dir}, "give its sequence number"},
		{[]string{"history", "orders", "x", "--data", dir}, `"x" is not a sequence number`},
	} {
		r := runCLI(t, "", nil, c.args...)
		if r.status == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("peeklock %s: status %d, stderr %q; want a failure saying %q", strings.Join(c.args, " "), r.status, r.stderr, c.want)
		}
	}
}

// TestHistoryNamesTheCLI: a message a runbook command sent names the
// command line and the OS user in its history, on the store (through the
// context) and through serve (the AMQP connection's container id), never
// "dashboard".
func TestHistoryNamesTheCLI(t *testing.T) {
	for _, ep := range runbookEndpoints(t, 1) {
		t.Run(ep.name, func(t *testing.T) {
			ep.must(t, "send", "payments", "hello", "--message-id", "cli-1")
			got := jsonLines(t, ep.must(t, "peek", "payments", "-o", "jsonl"))
			if len(got) != 1 {
				t.Fatalf("peek: %+v", got)
			}
			out := ep.must(t, "history", "payments", fmt.Sprint(got[0].SequenceNumber))
			want := actorName(actorCLI, nil)
			if ep.conn != "" {
				want = `(container "peeklock ` + want + `")`
			}
			if !strings.Contains(out, "sent") || !strings.Contains(out, want) || strings.Contains(out, "dashboard") {
				t.Fatalf("history names %q; want %q:\n%s", out, want, out)
			}
		})
	}
}
