package cli

import (
	"strings"
	"testing"
)

// TestCompletionOffersEntities: tab after a runbook command offers the
// entity names of the endpoint its flags name; `completion tcsh` is one
// line and exit 2, not the help and exit 0.
func TestCompletionOffersEntities(t *testing.T) {
	data := t.TempDir()
	fillStore(t, data, "orders", 1)
	fillStore(t, data, "payments", 1)
	r := runCLI(t, "", nil, "__complete", "peek", "--data", data, "")
	if r.status != 0 || !strings.Contains(r.stdout, "orders\n") || !strings.Contains(r.stdout, "payments\n") {
		t.Fatalf("completing peek's entity: %d %q %q", r.status, r.stdout, r.stderr)
	}
	r = runCLI(t, "", nil, "__complete", "history", "--data", data, "pay")
	if r.status != 0 || strings.Contains(r.stdout, "orders") || !strings.Contains(r.stdout, "payments\n") {
		t.Fatalf("completing history's entity: %d %q %q", r.status, r.stdout, r.stderr)
	}
	r = runCLI(t, "", nil, "completion", "tcsh")
	if r.status != 2 || !strings.Contains(r.stderr, `no script for the shell "tcsh"`) || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("completion tcsh: %d %q", r.status, r.stderr)
	}
}
