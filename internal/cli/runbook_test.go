package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgjson"
)

// endpoint is where the runbook commands of a test run: the embedded
// broker's store, or `peeklock serve`.
type endpoint struct {
	name string
	args []string // --data DIR, or --connection STRING --admin-url URL
	// conn is serve's connection string ("" for the store).
	conn string
}

// runbookEndpoints returns both endpoints, each with queues "orders" (n
// messages m-1…m-n, dead-lettered with reason "even" or "odd" by their
// number, the odd ones from a tenant acme) and "payments" (empty): the
// store filled through the engine, serve through the official SDK.
func runbookEndpoints(t *testing.T, n int) []endpoint {
	t.Helper()
	dir := t.TempDir()
	e := openStore(t, dir)
	ctx := context.Background()
	for _, q := range []string{"orders", "payments"} {
		if err := e.CreateEntity(ctx, broker.Entity{Path: q, Kind: broker.KindQueue, Settings: broker.EntitySettings{LockDuration: time.Minute}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= n; i++ {
		if err := e.Send(ctx, "orders", []*broker.Message{deadLetterCandidate(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: n})
	if err != nil || len(got) != n {
		t.Fatalf("receive %d: %v", len(got), err)
	}
	for _, m := range got {
		if err := e.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: m.LockToken, Reason: reasonOf(m.MessageID), Description: "for the test"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	config := writeConfig(t, `[{"Name":"orders","Properties":{"LockDuration":"PT1M"}},{"Name":"payments","Properties":{}}]`)
	conn, adminAddr, stop := startServe(t, "--config", config)
	t.Cleanup(stop)
	client, sender := sdkSender(t, conn, "orders")
	for i := 1; i <= n; i++ {
		m := deadLetterCandidate(i)
		if err := sender.SendMessage(ctx, &azservicebus.Message{MessageID: &m.MessageID, Body: m.Body, ApplicationProperties: m.ApplicationProperties}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rcv, err := client.NewReceiverForQueue("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	for left := n; left > 0; {
		msgs, err := rcv.ReceiveMessages(ctx, left, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := rcv.DeadLetterMessage(ctx, m, &azservicebus.DeadLetterOptions{Reason: ptr(reasonOf(m.MessageID)), ErrorDescription: ptr("for the test")}); err != nil {
				t.Fatal(err)
			}
		}
		left -= len(msgs)
	}
	rcv.Close(ctx)
	return []endpoint{
		{name: "store", args: []string{"--data", dir}},
		{name: "serve", args: []string{"--connection", conn, "--admin-url", "http://" + adminAddr}, conn: conn},
	}
}

func deadLetterCandidate(i int) *broker.Message {
	props := map[string]any{"n": int64(i)}
	if i%2 == 1 {
		props["tenant"] = "acme"
	}
	return &broker.Message{MessageID: fmt.Sprintf("m-%d", i), Body: []byte(fmt.Sprintf("order %d", i)), ApplicationProperties: props}
}

func reasonOf(id string) string {
	var i int
	fmt.Sscanf(id, "m-%d", &i)
	if i%2 == 0 {
		return "even"
	}
	return "odd"
}

// run runs a runbook command on the endpoint.
func (ep endpoint) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runCLI(t, stdin, nil, append(args, ep.args...)...)
}

// must runs a command that must succeed.
func (ep endpoint) must(t *testing.T, args ...string) string {
	t.Helper()
	r := ep.run(t, "", args...)
	if r.status != 0 {
		t.Fatalf("%s: peeklock %s: status %d, %s", ep.name, strings.Join(args, " "), r.status, r.stderr)
	}
	return r.stdout
}

// jsonLines decodes JSON lines of messages.
func jsonLines(t *testing.T, s string) []msgjson.Message {
	t.Helper()
	var out []msgjson.Message
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m msgjson.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// idsOf returns the MessageIds, sorted.
func idsOf(msgs []msgjson.Message) string {
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.MessageID)
	}
	slices.Sort(ids)
	return strings.Join(ids, ",")
}

// counts returns the counts list gives for an entity.
func (ep endpoint) counts(t *testing.T, entity string) entityJSON {
	t.Helper()
	var list []entityJSON
	if err := json.Unmarshal([]byte(ep.must(t, "list", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.Path == entity {
			return e
		}
	}
	t.Fatalf("%s: list has no %s: %+v", ep.name, entity, list)
	return entityJSON{}
}

// TestRunbookReading: list, peek and export against the store and serve:
// counts, selectors, filters (exit 3 when nothing matches), output
// formats, and no lock taken nor delivery counted.
func TestRunbookReading(t *testing.T) {
	for _, ep := range runbookEndpoints(t, 6) {
		t.Run(ep.name, func(t *testing.T) {
			if c := ep.counts(t, "orders"); c.DeadLettered != 6 || c.Active != 0 || c.Kind != "queue" {
				t.Fatalf("list: %+v", c)
			}
			table := ep.must(t, "list")
			if !strings.Contains(table, "ENTITY") || !regexpMatch(`orders\s+queue\s+0\s+0\s+0\s+0\s+6\s+0`, table) {
				t.Fatalf("list table:\n%s", table)
			}
			jl := ep.must(t, "list", "-o", "jsonl")
			if strings.Count(jl, "\n") != 2 || !strings.Contains(jl, `"Path":"payments"`) {
				t.Fatalf("list jsonl:\n%s", jl)
			}

			before := jsonLines(t, ep.must(t, "peek", "orders", "--dlq", "-o", "jsonl", "--max", "0"))
			if idsOf(before) != "m-1,m-2,m-3,m-4,m-5,m-6" {
				t.Fatalf("peek --dlq: %s", idsOf(before))
			}
			for _, m := range before {
				if m.ApplicationProperties["DeadLetterReason"] != reasonOf(m.MessageID) || m.LockedUntilUtc != nil {
					t.Fatalf("peeked %+v", m)
				}
			}
			three := jsonLines(t, ep.must(t, "peek", "orders", "--dlq", "-o", "jsonl", "--max", "3", "--from", fmt.Sprint(before[1].SequenceNumber)))
			if idsOf(three) != "m-2,m-3,m-4" {
				t.Fatalf("peek --from --max: %s", idsOf(three))
			}
			odd := jsonLines(t, ep.must(t, "peek", "orders", "--dlq", "-o", "jsonl", "--filter", "DeadLetterReason=odd"))
			if idsOf(odd) != "m-1,m-3,m-5" {
				t.Fatalf("peek --filter: %s", idsOf(odd))
			}
			if got := jsonLines(t, ep.must(t, "peek", "orders", "--dlq", "-o", "jsonl", "--filter", "ORDER 4")); idsOf(got) != "m-4" {
				t.Fatalf("peek --filter text: %s", idsOf(got))
			}
			var arr []msgjson.Message
			if err := json.Unmarshal([]byte(ep.must(t, "peek", "orders", "--dlq", "-o", "json", "--filter", "tenant=acme")), &arr); err != nil || idsOf(arr) != "m-1,m-3,m-5" {
				t.Fatalf("peek -o json: %v %s", err, idsOf(arr))
			}
			if r := ep.run(t, "", "peek", "orders", "--dlq", "--filter", "tenant=zeta"); r.status != 3 || !strings.Contains(r.stderr, `no message of orders/$DeadLetterQueue matches "tenant=zeta"`) {
				t.Fatalf("a filter that matches nothing: %d %q", r.status, r.stderr)
			}
			if out := ep.must(t, "peek", "orders"); strings.Count(out, "\n") != 1 {
				t.Fatalf("peek of the empty active messages:\n%s", out)
			}
			if out := ep.must(t, "peek", "orders", "--dlq", "--max", "2"); !regexpMatch(`(?m)^\d+\s+m-1\s+.*odd\s+order 1$`, out) || strings.Count(out, "\n") != 3 {
				t.Fatalf("peek table:\n%s", out)
			}

			file := filepath.Join(t.TempDir(), "dlq.jsonl")
			if out := ep.must(t, "export", "orders", "--dlq", "--out", file); out != "exported 6 messages to "+file+"\n" {
				t.Fatalf("export --out says %q", out)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			exported := jsonLines(t, string(data))
			if idsOf(exported) != "m-1,m-2,m-3,m-4,m-5,m-6" {
				t.Fatalf("export: %s", idsOf(exported))
			}
			if r := ep.run(t, "", "export", "orders", "--dlq", "--out", file); r.status != 2 || !strings.Contains(r.stderr, "file exists") {
				t.Fatalf("export over an existing file: %d %q", r.status, r.stderr)
			}
			none := filepath.Join(t.TempDir(), "none.jsonl")
			if r := ep.run(t, "", "export", "orders", "--dlq", "--filter", "nothing-like-it", "--out", none); r.status != 3 {
				t.Fatalf("export with a filter that matches nothing: %d %q", r.status, r.stderr)
			}
			if _, err := os.Stat(none); !os.IsNotExist(err) {
				t.Fatal("an export that matched nothing left its file")
			}
			if got := jsonLines(t, ep.must(t, "export", "orders", "--dlq", "--filter", "n=2")); idsOf(got) != "m-2" {
				t.Fatalf("export to stdout: %s", idsOf(got))
			}

			after := jsonLines(t, ep.must(t, "peek", "orders", "--dlq", "-o", "jsonl", "--max", "0"))
			for i := range after {
				if after[i].DeliveryCount != before[i].DeliveryCount || after[i].LockedUntilUtc != nil {
					t.Fatalf("reading changed %s: delivery count %d → %d", after[i].MessageID, before[i].DeliveryCount, after[i].DeliveryCount)
				}
			}
			if c := ep.counts(t, "orders"); c.DeadLettered != 6 || c.Locked != 0 {
				t.Fatalf("after reading: %+v", c)
			}
		})
	}
}

// TestRunbookWriting: send, import, resubmit and purge against the store
// and serve, and --read-only refusing them.
func TestRunbookWriting(t *testing.T) {
	for _, ep := range runbookEndpoints(t, 6) {
		t.Run(ep.name, func(t *testing.T) {
			for _, args := range [][]string{
				{"send", "payments", "x", "--read-only"},
				{"purge", "orders", "--yes", "--read-only"},
				{"resubmit", "orders", "--read-only"},
				{"import", "payments", "-", "--read-only"},
			} {
				if r := ep.run(t, "", args...); r.status != 2 || !strings.Contains(r.stderr, "the endpoint is read-only") {
					t.Fatalf("%v: %d %q", args, r.status, r.stderr)
				}
			}
			if r := ep.run(t, "", "resubmit", "orders", "--read-only", "--dry-run"); r.status != 0 {
				t.Fatalf("a dry run is read-only: %d %q", r.status, r.stderr)
			}

			// resubmit --dry-run changes nothing.
			dry := jsonLines(t, ep.must(t, "resubmit", "orders", "--filter", "DeadLetterReason=odd", "--dry-run", "-o", "jsonl"))
			if idsOf(dry) != "m-1,m-3,m-5" {
				t.Fatalf("dry run: %s", idsOf(dry))
			}
			if c := ep.counts(t, "orders"); c.DeadLettered != 6 || c.Active != 0 {
				t.Fatalf("a dry run changed %+v", c)
			}
			if r := ep.run(t, "", "resubmit", "orders", "--filter", "DeadLetterReason=nope"); r.status != 3 {
				t.Fatalf("resubmit of nothing: %d %q", r.status, r.stderr)
			}

			// resubmit the odd ones: back in orders, the even ones stay.
			r := ep.run(t, "", "resubmit", "orders", "--filter", "DeadLetterReason=odd", "-o", "jsonl")
			if r.status != 0 || !strings.Contains(r.stderr, "resubmitted 3 message(s) to orders, 0 failed") {
				t.Fatalf("resubmit: %d %q", r.status, r.stderr)
			}
			var outcomes []outcomeJSON
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				var o outcomeJSON
				if err := json.Unmarshal([]byte(line), &o); err != nil || !o.Resubmitted || o.From != "orders/$DeadLetterQueue" {
					t.Fatalf("outcome %q: %v", line, err)
				}
				outcomes = append(outcomes, o)
			}
			active := jsonLines(t, ep.must(t, "peek", "orders", "-o", "jsonl"))
			if len(outcomes) != 3 || idsOf(active) != "m-1,m-3,m-5" {
				t.Fatalf("after resubmit: %d outcomes, active %s", len(outcomes), idsOf(active))
			}
			for _, m := range active {
				if _, ok := m.ApplicationProperties["DeadLetterReason"]; ok || m.ApplicationProperties["tenant"] != "acme" {
					t.Fatalf("resubmitted copy: %+v", m.ApplicationProperties)
				}
			}
			if got := jsonLines(t, ep.must(t, "peek", "orders", "--dlq", "-o", "jsonl")); idsOf(got) != "m-2,m-4,m-6" {
				t.Fatalf("left dead-lettered: %s", idsOf(got))
			}
			ep.must(t, "resubmit", "orders", "--max", "1")
			if c := ep.counts(t, "orders"); c.DeadLettered != 2 || c.Active != 4 || c.Locked != 0 {
				t.Fatalf("after resubmit --max 1: %+v", c)
			}

			// export, purge, import: the dead letters go to payments.
			dump := ep.must(t, "export", "orders", "--dlq")
			if r := ep.run(t, "", "purge", "orders", "--dlq"); r.status != 2 || !strings.Contains(r.stderr, "add --yes") {
				t.Fatalf("purge without --yes: %d %q", r.status, r.stderr)
			}
			if out := ep.must(t, "purge", "orders", "--dlq", "--yes"); out != "purged 2 message(s) from orders/$DeadLetterQueue\n" {
				t.Fatalf("purge: %q", out)
			}
			if out := ep.must(t, "import", "payments", "-", "-o", "json"); out != `{"Entity":"payments","Imported":0}`+"\n" {
				t.Fatalf("import of nothing: %q", out)
			}
			r = ep.run(t, dump, "import", "payments", "-", "--batch", "1")
			if r.status != 0 || r.stdout != "imported 2 message(s) to payments\n" {
				t.Fatalf("import: %d %q %q", r.status, r.stdout, r.stderr)
			}
			imported := jsonLines(t, ep.must(t, "peek", "payments", "-o", "jsonl"))
			if idsOf(imported) != "m-4,m-6" || imported[0].Body == nil || *imported[0].Body != "order 4" {
				t.Fatalf("imported: %+v", imported)
			}
			if r := ep.run(t, "{\"MesageId\":\"x\"}\n", "import", "payments", "-"); r.status != 2 || !strings.Contains(r.stderr, `line 1: unknown field "MesageId"`) {
				t.Fatalf("import of a bad line: %d %q", r.status, r.stderr)
			}

			// send with properties, a session-less schedule, stdin.
			out := ep.must(t, "send", "payments", "hello", "--message-id", "s-1", "-p", "tenant=acme", "--subject", "greeting", "--ttl", "1h", "-o", "json")
			if out != `{"Entity":"payments","MessageId":"s-1"}`+"\n" {
				t.Fatalf("send: %q", out)
			}
			if r := ep.run(t, "from stdin", "send", "payments", "--message-id", "s-2"); r.status != 0 {
				t.Fatalf("send from stdin: %d %q", r.status, r.stderr)
			}
			if r := ep.run(t, "", "send", "payments", "later", "--message-id", "s-3", "--schedule", "+1h"); r.status != 0 || !strings.Contains(r.stdout, "scheduled s-3 on payments") {
				t.Fatalf("send --schedule: %d %q %q", r.status, r.stdout, r.stderr)
			}
			sent := jsonLines(t, ep.must(t, "peek", "payments", "-o", "jsonl", "--filter", "tenant=acme"))
			if len(sent) != 1 || *sent[0].Body != "hello" || sent[0].Subject != "greeting" || sent[0].TimeToLive != "1h0m0s" {
				t.Fatalf("sent: %+v", sent)
			}
			if got := jsonLines(t, ep.must(t, "peek", "payments", "-o", "jsonl", "--filter", "id=s-2")); len(got) != 1 || *got[0].Body != "from stdin" {
				t.Fatalf("sent from stdin: %+v", got)
			}
			if got := jsonLines(t, ep.must(t, "peek", "payments", "--scheduled", "-o", "jsonl")); idsOf(got) != "s-3" {
				t.Fatalf("scheduled: %s", idsOf(got))
			}
			if out := ep.must(t, "purge", "payments", "--yes", "-o", "jsonl"); out != `{"Entity":"payments","Purged":5}`+"\n" {
				t.Fatalf("purge of the queue: %q", out)
			}
			if ep.conn != "" {
				// The SDK sees what send sent.
				client, err := azservicebus.NewClientFromConnectionString(ep.conn, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer client.Close(context.Background())
				ep.must(t, "send", "payments", "to the SDK", "--message-id", "s-9", "--session", "")
				rcv, _ := client.NewReceiverForQueue("payments", nil)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				got, err := rcv.ReceiveMessages(ctx, 1, nil)
				if err != nil || len(got) != 1 || got[0].MessageID != "s-9" || string(got[0].Body) != "to the SDK" {
					t.Fatalf("the SDK receives %v, %v", got, err)
				}
			}
		})
	}
}

// TestRunbookTail: tail writes the messages that arrive after it started
// (serve: sent by the SDK while it runs), and from --from the ones already
// there (the store, which one process holds at a time).
func TestRunbookTail(t *testing.T) {
	eps := runbookEndpoints(t, 3)
	store, serve := eps[0], eps[1]
	if got := jsonLines(t, store.must(t, "tail", "orders", "--dlq", "--from", "1", "--max", "2", "-o", "jsonl")); idsOf(got) != "m-1,m-2" {
		t.Fatalf("tail --from of the store: %s", idsOf(got))
	}

	_, sender := sdkSender(t, serve.conn, "payments")
	ctx := context.Background()
	if err := sender.SendMessage(ctx, &azservicebus.Message{MessageID: ptr("pre-1"), Body: []byte("there before"), ApplicationProperties: map[string]any{"tenant": "acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	tail := startCLI(t, nil, append([]string{"tail", "payments", "-o", "jsonl", "--max", "2", "--interval", "100ms", "--filter", "tenant=acme"}, serve.args...)...)
	time.Sleep(300 * time.Millisecond) // let it find where the queue ends
	for i := 1; ; i++ {
		id := fmt.Sprintf("t-%d", i)
		props := map[string]any{"tenant": map[bool]string{true: "acme", false: "zeta"}[i%2 == 1]}
		if err := sender.SendMessage(ctx, &azservicebus.Message{MessageID: &id, Body: []byte(id), ApplicationProperties: props}, nil); err != nil {
			t.Fatal(err)
		}
		select {
		case <-tail.ended:
			if tail.status != 0 {
				t.Fatalf("tail: status %d: %s", tail.status, tail.err.String())
			}
			got := jsonLines(t, tail.out.String())
			if len(got) != 2 || got[0].MessageID == "pre-1" || got[0].ApplicationProperties["tenant"] != "acme" || got[1].ApplicationProperties["tenant"] != "acme" || got[0].SequenceNumber >= got[1].SequenceNumber {
				t.Fatalf("tail wrote %s", tail.out.String())
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
		if i > 100 {
			t.Fatalf("tail did not see two messages in %d sent: %s %s", i, tail.out.String(), tail.err.String())
		}
	}
}

// TestRunbookRefusals: what the user typed wrong in a runbook command ends
// with one line and exit status 2, before anything is read or written.
func TestRunbookRefusals(t *testing.T) {
	eps := runbookEndpoints(t, 1)
	for _, ep := range eps {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"peek", "ordrs"}, `unknown entity "ordrs"`},
			{[]string{"peek"}, "peek: which entity? (peeklock peek ENTITY)"},
			{[]string{"peek", "orders", "--dlq", "--deferred"}, "give one of --dlq, --transfer-dlq, --deferred and --scheduled"},
			{[]string{"peek", "orders", "-o", "yaml"}, `--output "yaml": want table, json or jsonl`},
			{[]string{"send", "orders", "a", "b"}, `send: unexpected argument "b"`},
			{[]string{"send", "orders", "x", "--schedule", "soon"}, `--schedule: schedule "soon" is neither a duration`},
			{[]string{"send", "orders", "x", "-p", "novalue"}, `--property "novalue": want NAME=VALUE`},
			{[]string{"import", "orders"}, "import: want ENTITY and FILE.jsonl"},
			{[]string{"import", "orders", "/nonexistent.jsonl"}, "no such file"},
			{[]string{"list", "extra"}, `list: unexpected argument "extra"`},
		} {
			r := ep.run(t, "", tc.args...)
			if r.status != 2 || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%s: peeklock %s: %d %q, want 2 and %q", ep.name, strings.Join(tc.args, " "), r.status, r.stderr, tc.want)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "list: no endpoint: give --data DIR or --connection"},
		{[]string{"list", "--data", "/nonexistent/data"}, "data directory /nonexistent/data does not exist"},
		{[]string{"list", "--data", "/tmp", "--connection", "x"}, "give --data or a connection"},
		{[]string{"list", "--connection", "prod"}, `list: "prod" is not a connection string, and the config file cannot name it`},
	} {
		r := runCLI(t, "", nil, tc.args...)
		if r.status != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("peeklock %s: %d %q, want 2 and %q", strings.Join(tc.args, " "), r.status, r.stderr, tc.want)
		}
	}
}

// TestRunbookNamedConnection: a connection of the config file, read-only
// as it says.
func TestRunbookNamedConnection(t *testing.T) {
	serve := runbookEndpoints(t, 1)[1]
	home := t.TempDir()
	cfg := filepath.Join(home, "peeklock", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte(fmt.Sprintf("[connections.dev]\nconnection_string = %q\nread_only = true\n", serve.conn)), 0o600)
	env := []string{"XDG_CONFIG_HOME=" + home}
	admin := serve.args[3]
	if r := runCLI(t, "", env, "peek", "orders", "--dlq", "-c", "dev", "--admin-url", admin, "-o", "jsonl"); r.status != 0 || idsOf(jsonLines(t, r.stdout)) != "m-1" {
		t.Fatalf("peek through a named connection: %d %q %q", r.status, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", env, "purge", "orders", "--yes", "-c", "dev", "--admin-url", admin); r.status != 2 || !strings.Contains(r.stderr, "read-only") {
		t.Fatalf("purge through a read-only connection: %d %q", r.status, r.stderr)
	}
	if r := runCLI(t, "", env, "list", "-c", "dve"); r.status != 2 || !strings.Contains(r.stderr, `did you mean "dev"?`) {
		t.Fatalf("a misspelt connection: %d %q", r.status, r.stderr)
	}
}

// TestRunbookListWatch: list --watch lists again every interval until
// interrupted, and an interrupt ends it with status 0.
func TestRunbookListWatch(t *testing.T) {
	serve := runbookEndpoints(t, 1)[1]
	watch := startCLI(t, nil, append([]string{"list", "--watch", "--interval", "100ms", "-o", "json"}, serve.args...)...)
	waitUntil(t, "three lists", func() bool { return strings.Count(watch.out.String(), "\n") >= 3 || !watch.running() })
	lists := strings.Split(watch.out.String(), "\n")
	if len(lists) < 4 {
		t.Fatalf("list --watch ended (status %d) after %d lists: %s", watch.status, len(lists)-1, watch.err.String())
	}
	for i, l := range lists[:3] {
		var list []entityJSON
		if err := json.Unmarshal([]byte(l), &list); err != nil || len(list) != 2 {
			t.Fatalf("list %d: %v %s", i, err, l)
		}
	}
	if status := watch.stop(); status != 0 {
		t.Fatalf("interrupted: status %d: %s", status, watch.err.String())
	}
}

// TestRunbookStoreInUse: the store of a running serve is refused with a
// hint to use serve's connection string, at run time (status 1).
func TestRunbookStoreInUse(t *testing.T) {
	dir := t.TempDir()
	_, _, stop := startServe(t, "--data", dir)
	defer stop()
	r := runCLI(t, "", nil, "list", "--data", dir)
	if r.status != 1 || !strings.Contains(r.stderr, "is in use (by peeklock serve? use its connection string with --connection)") {
		t.Fatalf("list on serve's store: %d %q", r.status, r.stderr)
	}
}
