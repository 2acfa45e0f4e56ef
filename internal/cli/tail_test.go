package cli

import (
	"strings"
	"testing"
	"time"
)

// TestRunbookTailKeepsTrying: when serve goes away under tail, tail says
// once that it keeps trying, and does (it was: "reconnecting", then exit
// 1); an interrupt ends it with status 0.
func TestRunbookTailKeepsTrying(t *testing.T) {
	config := writeConfig(t, `[{"Name":"q","Properties":{}}]`)
	p := launchServe(t, nil, "--config", config, "--amqp", "127.0.0.1:0", "--admin", "")
	conn := p.wait(`connection_string="([^"]+)"`)[1]
	tail := startCLI(t, nil, "tail", "q", "-c", conn, "--interval", "100ms")
	waitUntil(t, "tail's header", func() bool { return strings.Contains(tail.out.String(), "SEQ") })
	p.stop()
	waitUntil(t, "tail to say it keeps trying", func() bool { return strings.Contains(tail.err.String(), "trying again every 100ms until interrupted") })
	if !tail.running() {
		t.Fatalf("tail ended (status %d) although it said it keeps trying: %s", tail.status, tail.err.String())
	}
	if status := tail.stop(); status != 0 {
		t.Fatalf("tail interrupted: status %d: %s", status, tail.err.String())
	}
	if n := strings.Count(tail.err.String(), "trying again"); n != 1 {
		t.Fatalf("tail said %d times that it keeps trying:\n%s", n, tail.err.String())
	}
}

// waitUntil polls ok for up to 15 s.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
