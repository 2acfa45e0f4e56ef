package amqpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// Apache Qpid Proton's Python client (Debian's python3-qpid-proton) against
// the listener: a third AMQP 1.0 stack next to go-amqp (the Go SDK) and rhea
// (the JavaScript SDK), with no Service Bus knowledge of its own. The
// scenario scripts are in proton/.

// protonDir holds the Python scenarios.
const protonDir = "proton"

// protonPython is the interpreter that sees Debian's python3-qpid-proton; a
// python3 earlier on PATH (pyenv) may not.
const protonPython = "/usr/bin/python3"

// requireProton returns the Python that can import proton. Without it the
// test skips, saying how to get it, unless PEEKLOCK_REQUIRE_PROTON=1 (as CI
// sets), where it fails.
func requireProton(t *testing.T) string {
	t.Helper()
	return requirePython(t, "the Qpid Proton interop tests", "proton", "import proton; print(proton.VERSION)",
		"python3-qpid-proton", "PEEKLOCK_REQUIRE_PROTON")
}

// requirePython returns protonPython when it runs check, the script that
// imports modules (what a test needs, in words). Otherwise the test skips,
// naming the Debian packages, unless the environment variable env is "1",
// where it fails: CI sets it, so that a missing peer never passes as a
// skip.
func requirePython(t *testing.T, what, modules, check, packages, env string) string {
	t.Helper()
	out, err := exec.Command(protonPython, "-c", check).CombinedOutput()
	if err != nil {
		msg := what + " need " + protonPython + " with " + modules + " (apt-get install " + packages + "): " +
			strings.TrimSpace(lastLine(string(out), err))
		if os.Getenv(env) == "1" {
			t.Fatal(msg + " (" + env + "=1 makes this a failure)")
		}
		t.Skip(msg)
	}
	return protonPython
}

// lastLine returns the last line of a command's output, or its error.
func lastLine(out string, err error) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return l
	}
	return err.Error()
}

// runProton runs a scenario script of proton/ with args and returns the
// JSON line it printed last. A scenario that reports an error fails the
// test.
func runProton(t *testing.T, script string, args ...string) map[string]any {
	t.Helper()
	py := requireProton(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{filepath.Join(protonDir, script)}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var got map[string]any
	if err := json.Unmarshal([]byte(lastLine(stdout.String(), errNoOutput)), &got); err != nil {
		t.Fatalf("python %s: %v; no JSON result: %v\nstdout: %s\nstderr: %s", script, runErr, err, stdout.String(), stderr.String())
	}
	if e, ok := got["error"]; ok || runErr != nil {
		t.Fatalf("python %s: %v: %v\n%v\nstderr: %s", script, runErr, e, got["stack"], stderr.String())
	}
	return got
}

// errNoOutput stands for the output of a script that printed nothing.
var errNoOutput = errors.New("no output")

// guid matches a GUID in its usual text form.
var guid = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// TestProtonPeekLockSettlement sends messages without a message-id (the
// broker assigns each a GUID, as Service Bus does) and settles them in
// peek-lock with every AMQP outcome, checking the header delivery-count of
// each redelivery: the number of failed deliveries (§3). released gives a
// message back without counting; modified (delivery-failed or not) is an
// abandon and counts one; modified with undeliverable-here defers; rejected
// with com.microsoft:dead-letter dead-letters, where the message is received
// with its reason and without a failed delivery counted.
func TestProtonPeekLockSettlement(t *testing.T) {
	requireProton(t) // before the listener starts
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{MaxDeliveryCount: 10})
	got := runProton(t, "settle.py", env.addr, DefaultKeyName, DefaultKey, "q")

	put, _ := got["putToken"].(map[string]any)
	if put["status"] != float64(202) || put["correlated"] != true {
		t.Errorf("put-token on $cbs: %v, want status 202 with the request's id as correlation-id", put)
	}
	type step struct {
		subject, outcome string
		deliveryCount    float64
	}
	want := []step{
		{"m1", "released", 0}, // first delivery
		{"m1", "modified", 0}, // released did not count
		{"m1", "accepted", 1}, // the abandon (modified, delivery-failed) counted
		{"m2", "rejected", 0},
		{"m3", "modified", 0}, // deferred
		{"m4", "modified", 0}, // abandon without delivery-failed, as the SDKs send it
		{"m4", "accepted", 1}, // counted too
	}
	steps, _ := got["steps"].([]any)
	if len(steps) != len(want) {
		t.Fatalf("steps %v, want %d", steps, len(want))
	}
	ids := map[string]string{} // subject -> message-id
	for i, s := range steps {
		m := s.(map[string]any)
		subject, _ := m["subject"].(string)
		outcome, _ := m["outcome"].(string)
		dc, _ := m["deliveryCount"].(float64)
		id, _ := m["messageId"].(string)
		w := want[i]
		if subject != w.subject || outcome != w.outcome {
			t.Errorf("step %d: %s settled %q, want %s settled %q", i+1, subject, outcome, w.subject, w.outcome)
		}
		if dc != w.deliveryCount {
			t.Errorf("step %d (%s, then %s): header delivery-count %v, want %v (the failed deliveries so far)", i+1, subject, outcome, dc, w.deliveryCount)
		}
		if !guid.MatchString(id) {
			t.Errorf("step %d (%s): message-id %q, want a broker-assigned GUID", i+1, subject, id)
		}
		if prev, ok := ids[subject]; ok && prev != id {
			t.Errorf("step %d: %s came back with message-id %q, first %q", i+1, subject, id, prev)
		}
		ids[subject] = id
	}
	distinct := make([]string, 0, len(ids))
	for _, id := range ids {
		distinct = append(distinct, id)
	}
	slices.Sort(distinct)
	if len(slices.Compact(distinct)) != 4 {
		t.Errorf("message-ids %v, want four different ones", ids)
	}
	if u := got["unexpected"]; u != nil {
		t.Errorf("a receive after the scenario got %v, want nothing (m3 is deferred)", u)
	}

	dl, _ := got["deadLettered"].(map[string]any)
	if dl["subject"] != "m2" || dl["outcome"] != "accepted" || dl["messageId"] != ids["m2"] {
		t.Errorf("from the dead-letter sub-queue: %v, want m2 (message-id %s), accepted", dl, ids["m2"])
	}
	if dl["deadLetterReason"] != "proton" || dl["deadLetterErrorDescription"] != "rejected by qpid proton" {
		t.Errorf("dead-letter reason %v, description %v; want the rejected outcome's", dl["deadLetterReason"], dl["deadLetterErrorDescription"])
	}
	if dl["deliveryCount"] != float64(0) {
		t.Errorf("dead-lettered m2: header delivery-count %v, want 0 (no failed delivery)", dl["deliveryCount"])
	}

	if c := env.counts("q"); c.Active != 0 || c.Locked != 0 || c.Deferred != 1 || c.DeadLettered != 0 {
		t.Errorf("counts after the scenario %+v, want m3 deferred and nothing else", c)
	}
	deferred, err := env.eng.Browse(context.Background(), broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeferred, Max: 10})
	if err != nil || len(deferred) != 1 || deferred[0].Subject != "m3" || deferred[0].MessageID != ids["m3"] {
		t.Errorf("deferred: %v, %v; want m3", deferred, err)
	}
}
