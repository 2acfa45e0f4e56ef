package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/internal/syncbuf"
)

// lockedBuffer is safe for a process writing and a test reading.
type lockedBuffer = syncbuf.Buffer

// TestRunbookTailKeepsTrying: when serve goes away under tail, tail says
// once that it keeps trying, and does (it was: "reconnecting", then exit
// 1); an interrupt ends it with status 0.
func TestRunbookTailKeepsTrying(t *testing.T) {
	bin := buildBinary(t)
	config := writeConfig(t, `[{"Name":"q","Properties":{}}]`)
	p := launchServe(t, bin, nil, "--config", config, "--amqp", "127.0.0.1:0", "--admin", "")
	conn := p.wait(`connection_string="([^"]+)"`)[1]
	cmd := exec.Command(bin, "tail", "q", "-c", conn, "--interval", "100ms")
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitUntil(t, "tail's header", func() bool { return strings.Contains(out.String(), "SEQ") })
	p.stop()
	waitUntil(t, "tail to say it keeps trying", func() bool { return strings.Contains(errb.String(), "trying again every 100ms until interrupted") })
	select {
	case err := <-done:
		t.Fatalf("tail ended (%v) although it said it keeps trying: %s", err, errb.String())
	default:
	}
	cmd.Process.Signal(os.Interrupt)
	if err := <-done; err != nil {
		t.Fatalf("tail interrupted: %v: %s", err, errb.String())
	}
	if n := strings.Count(errb.String(), "trying again"); n != 1 {
		t.Fatalf("tail said %d times that it keeps trying:\n%s", n, errb.String())
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
