package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// TestServeHistoryAndLocks runs `peeklock serve --data DIR` and, while it
// runs, the runbook commands with the connection string it printed: list
// counts the two messages an SDK receiver holds locked as the dashboard
// does (LOCKED 2, ACTIVE 1), history reads a message's history (sent and
// locked by the SDK's connection), and --data on serve's store still says
// to use the connection string, which now works.
func TestServeHistoryAndLocks(t *testing.T) {
	data := t.TempDir()
	config := writeConfig(t, `[{"Name":"orders","Properties":{"LockDuration":"PT1M"}}]`)
	conn, _, stop := startServe(t, "--config", config, "--data", data)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, sender := sdkSender(t, conn, "orders")
	for i := 1; i <= 3; i++ {
		if err := sender.SendMessage(ctx, &azservicebus.Message{MessageID: ptr(fmt.Sprintf("h-%d", i)), Body: []byte("x")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rcv, err := client.NewReceiverForQueue("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	var held []*azservicebus.ReceivedMessage
	for len(held) < 2 {
		got, err := rcv.ReceiveMessages(ctx, 2-len(held), nil)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, got...)
	}

	r := runCLI(t, "", nil, "list", "-c", conn, "-o", "json")
	var list []entityJSON
	if err := json.Unmarshal([]byte(r.stdout), &list); r.status != 0 || err != nil || len(list) != 1 {
		t.Fatalf("list: %d %v %q %q", r.status, err, r.stdout, r.stderr)
	}
	if c := list[0]; c.Locked != 2 || c.Active != 1 {
		t.Fatalf("list counts %+v; want 2 locked, 1 active", c)
	}
	if r := runCLI(t, "", nil, "list", "-c", conn); r.status != 0 || !regexpMatch(`orders\s+queue\s+1\s+2\s`, r.stdout) {
		t.Fatalf("list table: %d %q %q", r.status, r.stdout, r.stderr)
	}

	seq := *held[0].SequenceNumber
	r = runCLI(t, "", nil, "history", "orders", fmt.Sprint(seq), "-c", conn)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.status != 0 || len(lines) != 3 || !strings.Contains(lines[1], "sent") || !strings.Contains(lines[2], "locked") {
		t.Fatalf("history through serve: %d\n%s\n%s", r.status, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", nil, "history", "orders", "99", "-c", conn); r.status != 1 || !strings.Contains(r.stderr, "sequence number 99") {
		t.Fatalf("history of no message: %d %q", r.status, r.stderr)
	}
	if r := runCLI(t, "", nil, "history", "orders", fmt.Sprint(seq), "--data", data); r.status != 1 || !strings.Contains(r.stderr, "use its connection string") {
		t.Fatalf("history on serve's store: %d %q", r.status, r.stderr)
	}
}
