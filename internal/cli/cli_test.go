package cli

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden help texts in testdata/help")

// helpCommands are the commands whose help texts are golden.
var helpCommands = [][]string{
	{}, {"serve"}, {"connect"}, {"version"}, {"help"},
	{"completion"}, {"completion", "bash"}, {"completion", "zsh"}, {"completion", "fish"}, {"completion", "powershell"},
	{"list"}, {"peek"}, {"tail"}, {"send"}, {"import"}, {"export"}, {"resubmit"}, {"deadletter"}, {"purge"}, {"history"},
}

// trailingSpace is what lipgloss pads lines with.
var trailingSpace = regexp.MustCompile(`(?m)[ \t]+$`)

// TestGoldenHelp compares each command's --help with its golden text in
// testdata/help (go test -run TestGoldenHelp -update rewrites them), and
// checks that every command has examples and that `peeklock help CMD`
// prints the same.
func TestGoldenHelp(t *testing.T) {
	for _, args := range helpCommands {
		name := strings.Join(append([]string{"peeklock"}, args...), "-")
		r := runCLI(t, "", nil, append(slices.Clone(args), "--help")...)
		if r.status != 0 || r.stderr != "" {
			t.Fatalf("%s --help: status %d, stderr %q", name, r.status, r.stderr)
		}
		got := trailingSpace.ReplaceAllString(r.stdout, "")
		if !strings.Contains(got, "EXAMPLES") {
			t.Errorf("%s --help has no examples", name)
		}
		path := filepath.Join("testdata", "help", name+".golden")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestGoldenHelp -update writes it)", err)
		}
		if got != string(want) {
			t.Errorf("%s --help differs from %s (go test -run TestGoldenHelp -update rewrites it):\n%s", name, path, got)
		}
		if len(args) > 0 && args[0] != "help" {
			h := runCLI(t, "", nil, append([]string{"help"}, args...)...)
			if trailingSpace.ReplaceAllString(h.stdout, "") != got {
				t.Errorf("peeklock help %s differs from its --help", strings.Join(args, " "))
			}
		}
	}
}

// TestVersion: --version, -v and `version` print the same line.
func TestVersion(t *testing.T) {
	var seen []string
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}, {"-version"}} {
		r := runCLI(t, "", nil, args...)
		if r.status != 0 || !strings.HasPrefix(r.stdout, "peeklock version ") || strings.Count(r.stdout, "\n") != 1 {
			t.Fatalf("%v: status %d, %q %q", args, r.status, r.stdout, r.stderr)
		}
		seen = append(seen, r.stdout)
	}
	if seen[0] != seen[1] || seen[1] != seen[2] {
		t.Fatalf("versions differ: %q", seen)
	}
}

// TestCompletionScripts: each shell's script is generated, and bash loads
// its script and completes peeklock's commands with it (bash is the one
// process: the script is generated in process).
func TestCompletionScripts(t *testing.T) {
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		r := runCLI(t, "", nil, "completion", sh)
		if r.status != 0 || !strings.Contains(r.stdout, "peeklock") {
			t.Fatalf("completion %s: status %d, %d bytes, %q", sh, r.status, len(r.stdout), r.stderr)
		}
		scripts[sh] = r.stdout
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script := filepath.Join(t.TempDir(), "peeklock.bash")
	if err := os.WriteFile(script, []byte(scripts["bash"]), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", `set -e; source "$1"; complete -p peeklock`, "bash", script)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "complete -o default -F __start_peeklock peeklock" {
		t.Fatalf("bash does not load the completion script: %v\n%s", err, out)
	}
	// What the script asks peeklock for when the user presses tab.
	r := runCLI(t, "", nil, "__complete", "se")
	if r.status != 0 || !strings.Contains(r.stdout, "serve") {
		t.Fatalf("completing \"se\": status %d, %q", r.status, r.stdout)
	}
	r = runCLI(t, "", nil, "__complete", "serve", "--max-c")
	if r.status != 0 || !strings.Contains(r.stdout, "--max-connections") {
		t.Fatalf("completing \"serve --max-c\": status %d, %q", r.status, r.stdout)
	}
}

// TestManPage: `peeklock man` writes a man page with every command.
func TestManPage(t *testing.T) {
	r := runCLI(t, "", nil, "man")
	if r.status != 0 || !strings.Contains(r.stdout, ".TH PEEKLOCK") || !strings.Contains(r.stdout, "serve") {
		t.Fatalf("man: status %d, %q…", r.status, r.stdout[:min(len(r.stdout), 200)])
	}
}

// TestNormalizeArgs: single-dash long flags of the standard flag package
// become double-dash ones; shorthands, values and what follows "--" stay.
func TestNormalizeArgs(t *testing.T) {
	root := newRootCommand(Streams{})
	for _, tc := range []struct{ in, want string }{
		{"-entity q -no-demo -data /d", "--entity q --no-demo --data /d"},
		{"serve -amqp=:5672 -admin :5300 -key a=b", "serve --amqp=:5672 --admin :5300 --key a=b"},
		{"-h", "-h"},
		{"-v", "-v"},
		{"-version", "--version"},
		{"-help", "--help"},
		{"connect -entity -read-only", "connect --entity -read-only"}, // the value of --entity stays
		{"serve -- -data", "serve -- -data"},
		{"-bogus", "-bogus"},
		{"--theme dark -refresh 2s", "--theme dark --refresh 2s"},
	} {
		got := strings.Join(normalizeArgs(root, strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("normalizeArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSingleDashFlagsStillWork runs the command line with the single-dash flags
// scripts used before: each is parsed (the run gets past the flags to a
// check that names what it was given).
func TestSingleDashFlagsStillWork(t *testing.T) {
	data := t.TempDir()
	fillStore(t, data, "orders", 1)
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"-no-demo", "-data", data, "-entity", "order"}, 2, `unknown entity "order"; did you mean "orders"?`},
		{[]string{"-no-demo", "-data=" + data, "-read-only", "-theme", "neon"}, 2, `--theme: unknown theme "neon"`},
		{[]string{"serve", "-max-connections=0"}, 2, "--max-connections 0: at least 1"},
		{[]string{"serve", "-amqp", "nonsense", "-admin", ""}, 2, `--amqp "nonsense": want HOST:PORT`},
		{[]string{"connect", "-read-only", "-entity", "q"}, 2, "no connection string"},
		{[]string{"-help"}, 0, ""},
	} {
		r := runCLI(t, "", nil, tc.args...)
		if r.status != tc.status || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("peeklock %s: status %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), r.status, r.stderr, tc.status, tc.want)
		}
	}
}

// regexpMatch reports whether s matches the regular expression re.
func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
