package cli

import (
	"os/exec"
	"testing"
)

// TestHelpSurvivesAClosedPipe: `peeklock serve --help` into a pipe whose
// reader stops after the first bytes (as `| grep -q` does) exits 0, because
// the help reaches the pipe in one write; written piece by piece it died of
// SIGPIPE, and a probe under `set -o pipefail` failed. It runs the binary:
// SIGPIPE is what a process gets when it writes to a pipe no one reads.
func TestHelpSurvivesAClosedPipe(t *testing.T) {
	bin := buildBinary(t)
	for range 20 {
		cmd := exec.Command(bin, "serve", "--help")
		r, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		_ = r.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("serve --help with its reader gone after one byte: %v", err)
		}
	}
}
