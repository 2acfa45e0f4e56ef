package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestRunbookDeadLetter: deadletter moves the messages chosen by sequence
// number or by filter to the dead-letter queue with the reason and
// description given, leaves the others active with their delivery counts,
// reports a sequence number it cannot find (exit 1), and refuses what is
// missing (exit 2) or matches nothing (exit 3); on the store and on serve.
func TestRunbookDeadLetter(t *testing.T) {
	for _, ep := range runbookEndpoints(t, 1) {
		t.Run(ep.name, func(t *testing.T) {
			for i := 1; i <= 5; i++ {
				ep.must(t, "send", "payments", fmt.Sprintf("pay %d", i), "--message-id", fmt.Sprintf("p-%d", i), "-p", fmt.Sprintf("tenant=%s", map[bool]string{true: "acme", false: "zeta"}[i <= 2]))
			}
			active := jsonLines(t, ep.must(t, "peek", "payments", "-o", "jsonl"))
			if len(active) != 5 {
				t.Fatalf("peek: %d", len(active))
			}
			third := active[2].SequenceNumber
			r := ep.run(t, "", "deadletter", "payments", "--seq", fmt.Sprint(third), "--reason", "PoisonMessage", "--description", "by hand", "-o", "jsonl")
			var o deadLetterJSON
			if r.status != 0 || json.Unmarshal([]byte(r.stdout), &o) != nil || !o.DeadLettered || o.MessageID != "p-3" ||
				!strings.Contains(r.stderr, "dead-lettered 1 message(s) of payments to payments/$DeadLetterQueue, 0 failed") {
				t.Fatalf("deadletter --seq: %d %q %q", r.status, r.stdout, r.stderr)
			}
			if out := ep.must(t, "deadletter", "payments", "--filter", "tenant=acme", "--reason", "Quarantine"); !regexpMatch(`(?m)^\d+\s+p-1\s+dead-lettered \(Quarantine\)$`, out) || !strings.Contains(out, "p-2") {
				t.Fatalf("deadletter --filter:\n%s", out)
			}
			dlq := jsonLines(t, ep.must(t, "peek", "payments", "--dlq", "-o", "jsonl"))
			if idsOf(dlq) != "p-1,p-2,p-3" {
				t.Fatalf("dead-lettered: %s", idsOf(dlq))
			}
			for _, m := range dlq {
				if m.MessageID == "p-3" && (m.ApplicationProperties["DeadLetterReason"] != "PoisonMessage" || m.ApplicationProperties["DeadLetterErrorDescription"] != "by hand") {
					t.Fatalf("p-3 dead-lettered with %v", m.ApplicationProperties)
				}
			}
			left := jsonLines(t, ep.must(t, "peek", "payments", "-o", "jsonl"))
			if idsOf(left) != "p-4,p-5" || left[0].DeliveryCount != active[3].DeliveryCount || left[0].LockedUntilUtc != nil {
				t.Fatalf("left active: %+v", left)
			}
			if r := ep.run(t, "", "deadletter", "payments", "--seq", fmt.Sprint(third), "--reason", "again"); r.status != 1 || !strings.Contains(r.stdout, "FAILED: not among the available messages") {
				t.Fatalf("deadletter of a message gone: %d %q %q", r.status, r.stdout, r.stderr)
			}
			for _, tc := range []struct {
				args   []string
				status int
				want   string
			}{
				{[]string{"deadletter", "payments", "--seq", "4"}, 2, "give the dead-letter reason"},
				{[]string{"deadletter", "payments", "--reason", "r"}, 2, "give --seq N or --filter F"},
				{[]string{"deadletter", "payments", "--reason", "r", "--filter", "tenant=nobody"}, 3, `no active message of payments matches "tenant=nobody"`},
			} {
				if r := ep.run(t, "", tc.args...); r.status != tc.status || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("%v: %d %q, want %d and %q", tc.args, r.status, r.stderr, tc.status, tc.want)
				}
			}
		})
	}
}
