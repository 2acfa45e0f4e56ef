package amqpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// The official Python SDK on Microsoft's C AMQP stack (Debian's
// python3-azure, azure-servicebus 7.8.2, with python3-uamqp) against the
// listener behind a front, unchanged but for trust in the local CA: the
// scenario is uamqp/scenario.py.

// uamqpScenario is the Python scenario, relative to the package.
var uamqpScenario = filepath.Join("uamqp", "scenario.py")

// uamqpSteps are the scenario's steps, in order.
var uamqpSteps = []string{"send and receive", "receive and delete", "peek", "settle", "renew lock",
	"schedule and cancel", "sessions", "errors", "topic and rules"}

// requireUAMQP returns the Python that can import azure.servicebus and
// uamqp. Without them the test skips, saying how to get them, unless
// PEEKLOCK_REQUIRE_UAMQP=1 (as CI sets), where it fails.
func requireUAMQP(t *testing.T) string {
	t.Helper()
	return requirePython(t, "the uamqp interop test", "azure.servicebus and uamqp",
		"import azure.servicebus, uamqp; print(azure.servicebus.__version__)", "python3-azure python3-uamqp", "PEEKLOCK_REQUIRE_UAMQP")
}

// TestUAMQPPythonSDK runs the scenario: send, receive in peek-lock and
// receive-and-delete, peek, every settlement, deferred receive, the
// dead-letter queue, lock renewal, schedule and cancel, sessions with
// their state and lock, errors as the SDK's exceptions, and a topic's
// subscription with rules put through the admin client. Each step checks what it got; the test then checks
// that every entity is empty and the rules are those the scenario left.
func TestUAMQPPythonSDK(t *testing.T) {
	py := requireUAMQP(t) // before the listener starts
	var logBuf lockedBuffer
	env := newFrontEnv(t, engine.Options{}, Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	env.queue("q", broker.EntitySettings{})
	env.queue("sq", broker.EntitySettings{RequiresSession: true})
	env.create(broker.Entity{Path: "t", Kind: broker.KindTopic}, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription})

	// The scenario bounds itself (240 s); this is for a Python that hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, uamqpScenario, env.port, env.caPath)
	cmd.Env = append(os.Environ(), "REQUESTS_CA_BUNDLE="+env.caPath, "HOME="+t.TempDir(), "PYTHONDONTWRITEBYTECODE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var got struct {
		Steps []struct {
			Name, Error, Stack string
			OK                 bool
		}
	}
	if err := json.Unmarshal([]byte(lastLine(stdout.String(), errNoOutput)), &got); err != nil {
		t.Fatalf("python %s: %v; no JSON result: %v\nstdout: %s\nstderr: %s\nlistener log:\n%s", uamqpScenario, runErr, err, stdout.String(), stderr.String(), logBuf.String())
	}
	var names []string
	failed := false
	for _, s := range got.Steps {
		names = append(names, s.Name)
		if !s.OK {
			failed = true
			t.Errorf("step %q: %s\n%s", s.Name, s.Error, s.Stack)
		}
	}
	if !slices.Equal(names, uamqpSteps) {
		failed = true
		t.Errorf("steps %q, want %q", names, uamqpSteps)
	}
	if runErr != nil {
		failed = true
		t.Errorf("python %s: %v\nstderr: %s", uamqpScenario, runErr, stderr.String())
	}
	if failed {
		t.Logf("listener log:\n%s", logBuf.String())
	}

	// The SDK sends a settlement without waiting for an answer: the last
	// ones may still be on their way.
	for _, path := range []string{"q", "sq", "t/Subscriptions/s"} {
		waitFor(t, 10*time.Second, path+" empty after the scenario", func() bool { return env.counts(path) == (broker.Counts{}) })
	}
	ent, err := env.eng.Entity(context.Background(), "t/Subscriptions/s")
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, r := range ent.Rules {
		rules = append(rules, r.Name)
	}
	if slices.Sort(rules); !slices.Equal(rules, []string{"byid", "red"}) {
		t.Errorf("rules of the subscription %q, want byid and red", rules)
	}
}
