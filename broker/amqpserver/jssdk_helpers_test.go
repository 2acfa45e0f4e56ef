package amqpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// jssdkDir holds the Node scenarios of the official JavaScript SDK
// (@azure/service-bus on rhea) and their package-lock.json.
const jssdkDir = "jssdk"

// requireNode returns the node binary for the JavaScript SDK scenarios.
// Without node or without jssdk/node_modules the test skips, saying how to
// get them, unless PEEKLOCK_REQUIRE_NODE=1 (as .ci/run sets), where it fails.
func requireNode(t *testing.T) string {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("PEEKLOCK_REQUIRE_NODE") == "1" {
			t.Fatalf(format+" (PEEKLOCK_REQUIRE_NODE=1 makes this a failure)", args...)
		}
		t.Skipf(format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("the JavaScript SDK interop tests need Node.js: node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(jssdkDir, "node_modules", "@azure", "service-bus", "package.json")); err != nil {
		missing("the JavaScript SDK interop tests need its packages: run `npm ci --ignore-scripts` in broker/amqpserver/jssdk")
	}
	return node
}

// runNode runs one scenario script of jssdk/ against the listener of env
// with the emulator connection string of the default key, and returns the
// JSON line it printed. A scenario that reports an error fails the test.
func runNode(t *testing.T, env *testEnv, script string, args ...string) map[string]any {
	t.Helper()
	return runNodeEnv(t, env, nil, script, args...)
}

// runNodeEnv is runNode with more environment variables for the script.
func runNodeEnv(t *testing.T, env *testEnv, extra []string, script string, args ...string) map[string]any {
	t.Helper()
	node := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = jssdkDir
	cmd.Env = append(os.Environ(), "PEEKLOCK_CONNECTION_STRING="+env.connString(DefaultKeyName, DefaultKey))
	cmd.Env = append(cmd.Env, extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("node %s: %v; no JSON result: %v\nstdout: %s\nstderr: %s", script, runErr, err, stdout.String(), stderr.String())
	}
	if e, ok := got["error"]; ok || runErr != nil {
		t.Fatalf("node %s: %v: %v\n%v", script, runErr, e, got["stack"])
	}
	return got
}

// checkJSON compares a scenario's result with the JSON text want, field by
// field, so that a failure names the fields that differ.
func checkJSON(t *testing.T, got map[string]any, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	for k, wv := range w {
		if gv, ok := got[k]; !ok || !reflect.DeepEqual(gv, wv) {
			gj, _ := json.Marshal(gv)
			wj, _ := json.Marshal(wv)
			t.Errorf("%s:\n got %s\nwant %s", k, gj, wj)
		}
	}
	for k, gv := range got {
		if _, ok := w[k]; !ok {
			gj, _ := json.Marshal(gv)
			t.Errorf("unexpected field %s: %s", k, gj)
		}
	}
}
