package cli

import "testing"

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
