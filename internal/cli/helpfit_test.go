package cli

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHelpFits80Columns: every command's help written into a pipe has no
// trailing spaces and no line over 80 columns but single words too long to
// break (connection strings); purge's examples are whole (fang cuts a
// longer line with "…").
func TestHelpFits80Columns(t *testing.T) {
	for _, args := range helpCommands {
		if len(args) == 0 {
			continue // the root's help is fang's own
		}
		r := runCLI(t, "", nil, append(args, "--help")...)
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.TrimRight(line, " \t") != line {
				t.Errorf("%v --help: trailing space in %q", args, line)
			}
			if utf8.RuneCountInString(line) > helpWidth && len(strings.Fields(line)) > 1 {
				t.Errorf("%v --help: %d columns: %q", args, utf8.RuneCountInString(line), line)
			}
			if strings.Contains(line, "…") && args[0] == "purge" {
				t.Errorf("purge --help: a cut line %q", line)
			}
		}
	}
	r := runCLI(t, "", nil, "purge", "--help")
	if !strings.Contains(r.stdout, "peeklock purge orders --dlq --yes --data ./data\n") {
		t.Errorf("purge --help lacks its whole example:\n%s", r.stdout)
	}
}
