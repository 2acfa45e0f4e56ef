package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
	"github.com/peeklock/peeklock/internal/syncbuf"
	"github.com/peeklock/peeklock/internal/testhome"
)

// TestCommandLine checks the exit statuses and messages of the command
// line: --help exits 0, a bad flag or argument exits 2 with one line. It
// runs in process, with the streams captured and the environment given.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		env    []string
		status int
		want   string
	}{
		{[]string{"--help"}, nil, 0, "USAGE"},
		{[]string{"serve", "--help"}, nil, 0, "peeklock serve"},
		{[]string{"connect", "--help"}, nil, 0, "SERVICEBUS_CONNECTION_STRING"},
		{[]string{"--bogus"}, nil, 2, "peeklock: unknown flag: --bogus (see peeklock --help)\n"},
		{[]string{"-bogus"}, nil, 2, "peeklock: unknown flag: -bogus (see peeklock --help)\n"},
		{[]string{"extra"}, nil, 2, "peeklock: unknown command \"extra\" (see peeklock --help)\n"},
		{[]string{"connect"}, nil, 2, "no connection string"},
		{[]string{"connect"}, []string{"SERVICEBUS_CONNECTION_STRING=Endpoint=sb://x;SharedAccessKeyName=k"}, 2, "connect: bad connection string"},
		{[]string{"list"}, []string{"SERVICEBUS_CONNECTION_STRING=amqp://nowhere:5672", "SERVICEBUS_CONNECTION_STRING="}, 2, "list: no endpoint"},
		{[]string{"--config", "/nonexistent/Config.json", "--no-demo"}, nil, 2, "peeklock: config /nonexistent/Config.json: no such file (see peeklock --help)\n"},
		{[]string{"serve", "--max-connections", "0"}, nil, 2, "peeklock: --max-connections 0: at least 1 (see peeklock --help)\n"},
		{[]string{"serve", "--max-frame-size", "100"}, nil, 2, "--max-frame-size 100: between 512 and 4294967295 bytes"},
		{[]string{"serve", "--idle-timeout", "-1s"}, nil, 2, "--idle-timeout -1s: 0 (never) or more"},
		{[]string{"serve", "--auth-timeout", "-1s"}, nil, 2, "--auth-timeout -1s: 0 (never) or more"},
		{[]string{"serve", "--max-unauthenticated", "0"}, nil, 2, "--max-unauthenticated 0: at least 1"},
		{[]string{"serve", "--key", "nokey"}, nil, 2, `want NAME=KEY[:RIGHTS], got "nokey"`},
		{[]string{"serve", "--key", "k=secret1", "--key", "k=secret2"}, nil, 2, `key name "k" given twice`},
		{[]string{"serve", "--key", "=secret"}, nil, 2, `want NAME=KEY[:RIGHTS], got "=…"`},
		{[]string{"serve", "--key", "k=secret:Send,Read"}, nil, 2, `key "k": unknown right "Read"; the rights are Manage, Send and Listen`},
		{[]string{"serve", "--key", "k=:Send"}, nil, 2, `want NAME=KEY[:RIGHTS], got "k=…"`},
	} {
		var buf syncbuf.Buffer
		status := Execute(context.Background(), tc.args, Streams{In: strings.NewReader(""), Out: &buf, Err: &buf, Env: tc.env})
		out := buf.String()
		if status != tc.status || !strings.Contains(string(out), tc.want) {
			t.Errorf("peeklock %s: status %d, output %q; want status %d and %q", strings.Join(tc.args, " "), status, out, tc.status, tc.want)
		}
		if tc.status == 2 && strings.Count(string(out), "\n") != 1 {
			t.Errorf("peeklock %s: want exactly one line, got %q", strings.Join(tc.args, " "), out)
		}
	}
}

// tmuxSession is a real terminal (tmux, 120x40) running one command.
type tmuxSession struct {
	t    *testing.T
	sock string
}

// newTmux starts command in a new tmux server of its own; when command
// ends, the pane shows "peeklock exited STATUS".
func newTmux(t *testing.T, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	tm := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	tm.run("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", command+"; echo peeklock exited $?; sleep 30")
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.sock, "kill-server").Run() })
	return tm
}

func (tm *tmuxSession) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// send types keys (tmux key names).
func (tm *tmuxSession) send(keys ...string) {
	tm.run(append([]string{"send-keys", "-t", "e2e"}, keys...)...)
}

func (tm *tmuxSession) screen() string { return tm.run("capture-pane", "-p", "-t", "e2e") }

// waitFor polls the screen until ok holds, for at most 15 s.
func (tm *tmuxSession) waitFor(what string, ok func(string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waiting for %s; the screen is:\n%s", what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// has reports whether the screen holds every part.
func has(parts ...string) func(string) bool {
	return func(s string) bool {
		for _, p := range parts {
			if !strings.Contains(s, p) {
				return false
			}
		}
		return true
	}
}

// TestTmuxEndToEnd drives the real binary in a real terminal (tmux): it
// starts the dashboard on a durable store that the test filled, locks a
// message with `l`, sees its countdown in the Locked pane, completes it with
// `c`, opens the detail view (its history and body at the end), and quits
// with `q`.
func TestTmuxEndToEnd(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	fillStore(t, data, "e2e", 3)

	tm := newTmux(t, fmt.Sprintf("env XDG_CONFIG_HOME=%s XDG_STATE_HOME=%s %s --data %s --no-demo --entity e2e", t.TempDir(), t.TempDir(), bin, data))
	waitFor, send := tm.waitFor, tm.send
	waitFor("the entity and its three messages", has("e2e", "Active 3", "msg-1", "msg-2", "msg-3"))
	send("l")
	waitFor("a lock counting down", has("Locked 1", "Active 2"))
	send("2")
	send("c")
	waitFor("the completed message gone", has("Locked 0", "Active 2"))
	send("1")
	send("Enter")
	waitFor("the detail view", has("Broker properties", "SequenceNumber"))
	send("G")
	waitFor("its history and body at the end", has("History (1 events)", "sent  by dashboard", "hello from the e2e test"))
	send("g")
	waitFor("the top of the detail view again", has("Broker properties"))
	send("Escape")
	// Wait before the next key: ESC followed at once by q reads as alt+q.
	waitFor("the panes again", func(s string) bool { return !strings.Contains(s, "Broker properties") })
	send("i")
	waitFor("the entity info view", has("e2e › info", "Lock duration", "1m", "Max delivery count", "10 deliveries (default)"))
	send("Escape")
	waitFor("the panes again", func(s string) bool { return !strings.Contains(s, "Lock duration") })
	send("q")
	waitFor("the program to exit", has("peeklock exited 0"))

	// The store kept what the dashboard did: two messages left, the first
	// one completed.
	e := openStore(t, data)
	ent, err := e.Entity(context.Background(), "e2e")
	if err != nil {
		t.Fatal(err)
	}
	if ent.Counts.Active != 2 {
		t.Errorf("after the session the store holds %+v; want 2 active", ent.Counts)
	}
	e.Close()
}

// binary is the peeklock binary the tests run, built once.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// TestMain runs the tests with HOME and the XDG directories in a temporary
// directory (the binaries they start inherit them), and fails when any
// wrote under the real home or into the working directory. fang sizes the
// root's help by the process's stdout, not by the command's output: the
// tests fix it at the width a pipe gets (fang's __FANG_TEST_WIDTH), so that
// the help golden texts also hold when `go test` runs in a terminal.
func TestMain(m *testing.M) {
	os.Setenv("__FANG_TEST_WIDTH", "120")
	code := testhome.Main(m)
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// buildBinary builds the peeklock binary (once for the whole run) and
// returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		binary.dir, binary.err = os.MkdirTemp("", "peeklock-bin")
		if binary.err != nil {
			return
		}
		binary.path = filepath.Join(binary.dir, "peeklock")
		build := exec.Command("go", "build", "-o", binary.path, "../..")
		// The go command may write telemetry into its config directory
		// after it ended: the binary's directory, not a test's TempDir
		// (a test may have set XDG_CONFIG_HOME to one).
		build.Env = append(os.Environ(), "XDG_CONFIG_HOME="+binary.dir)
		binary.out, binary.err = build.CombinedOutput()
	})
	if binary.err != nil {
		t.Fatalf("go build: %v\n%s", binary.err, binary.out)
	}
	return binary.path
}

func openStore(t *testing.T, dir string) *engine.Engine {
	t.Helper()
	st, err := store.OpenPebble(dir, store.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func fillStore(t *testing.T, dir, queue string, n int) {
	t.Helper()
	e := openStore(t, dir)
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: queue, Kind: broker.KindQueue,
		Settings: broker.EntitySettings{LockDuration: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; {
		batch := make([]*broker.Message, 0, 1000)
		for ; i <= n && len(batch) < cap(batch); i++ {
			batch = append(batch, &broker.Message{MessageID: fmt.Sprintf("msg-%d", i), ContentType: "text/plain",
				Body: []byte("hello from the e2e test")})
		}
		if err := e.Send(ctx, queue, batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}
