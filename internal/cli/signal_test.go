package cli

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peeklock/peeklock/internal/syncbuf"
)

// TestServeStopsOnASignal runs the binary, since only a process receives
// signals: SIGTERM and an interrupt (Ctrl-C) each end `peeklock serve`
// with status 0 after it says it is shutting down. The tests that run a
// command in process (startCLI) end it through its context, which is what
// a signal ends in the binary.
func TestServeStopsOnASignal(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		cmd := exec.Command(bin, "serve", "--amqp", "127.0.0.1:0", "--admin", "127.0.0.1:0")
		// Without --data the local CA goes to the config directory: a temporary one.
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		var log syncbuf.Buffer
		cmd.Stderr = &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		waitUntil(t, "serve to be ready", func() bool { return strings.Contains(log.String(), `msg="admin API ready"`) })
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil || !strings.Contains(log.String(), `msg="shutting down"`) {
				t.Errorf("serve on %v: %v\n%s", sig, err, log.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("serve did not stop on %v:\n%s", sig, log.String())
		}
	}
}
