package cli

import (
	"strings"
	"testing"
)

// TestEnvironGet: a variable's last entry wins, one not set (or written
// without "=") is "", and an empty environment has nothing.
func TestEnvironGet(t *testing.T) {
	env := environ{"USER=alice", "NO_COLOR", "USER=bob", "EMPTY=", "A=b=c"}
	for name, want := range map[string]string{"USER": "bob", "NO_COLOR": "", "EMPTY": "", "A": "b=c", "HOME": ""} {
		if got := env.get(name); got != want {
			t.Errorf("get(%q) = %q, want %q", name, got, want)
		}
	}
	if got := environ(nil).get("USER"); got != "" {
		t.Errorf("an empty environment has USER=%q", got)
	}
}

// TestCommandsReadTheirEnvironment: SERVICEBUS_CONNECTION_STRING of the
// command line's environment names the endpoint of a runbook command and of
// its completion, and the process's own is not read.
func TestCommandsReadTheirEnvironment(t *testing.T) {
	conn, _, stop := startServe(t, "--config", writeConfig(t, `[{"Name":"orders","Properties":{}}]`))
	defer stop()
	env := []string{"SERVICEBUS_CONNECTION_STRING=" + conn}
	if r := runCLI(t, "", env, "list", "-o", "jsonl"); r.status != 0 || !strings.Contains(r.stdout, `"Path":"orders"`) {
		t.Errorf("list with the connection string in its environment: %d %q %q", r.status, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", env, "__complete", "peek", "ord"); r.status != 0 || !strings.Contains(r.stdout, "orders\n") {
		t.Errorf("completing peek's entity with the connection string in the environment: %d %q %q", r.status, r.stdout, r.stderr)
	}
	t.Setenv("SERVICEBUS_CONNECTION_STRING", conn) // the process's: not the command line's
	if r := runCLI(t, "", nil, "list"); r.status != 2 || !strings.Contains(r.stderr, "list: no endpoint") {
		t.Errorf("list read the process's environment: %d %q %q", r.status, r.stdout, r.stderr)
	}
}
