package sshserver

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	gossh "golang.org/x/crypto/ssh"

	"github.com/peeklock/peeklock/broker"
)

const waitLong = 10 * time.Second

func TestUnknownKeyIsRefused(t *testing.T) {
	ts := startServer(t, newEngine(t, 1), nil)
	c, err := ts.dial(ts.stranger, nil)
	if err == nil {
		c.Close()
		t.Fatal("a key that is not in authorized_keys got in")
	}
	if !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("dial error %q, want an authentication failure", err)
	}
}

func TestReadOnlyKeySeesDashboardButCannotComplete(t *testing.T) {
	e := newEngine(t, 1)
	ts := startServer(t, e, nil)
	term := openTerm(t, ts.mustDial(ts.reader), 200, 30)
	term.waitScreen(waitLong, "orders", "m-1", "Active 1", "READ-ONLY")

	term.press("l") // lock: refused
	term.waitScreen(waitLong, "✗ read-only: lock next is disabled: read-only mode: this would change the broker")
	term.press("2c") // the Locked pane, then complete: refused
	term.waitScreen(waitLong, "✗ read-only: complete is disabled: read-only mode: this would change the broker")
	term.press("q")
	if code := term.waitExit(waitLong); code != 0 {
		t.Fatalf("exit status %d after q, want 0", code)
	}
	if c := counts(t, e, "orders"); c.Active != 1 || c.Locked != 0 {
		t.Fatalf("counts = %+v, want the message still there and unlocked", c)
	}
	if lines := ts.audit.lines(t); len(lines) != 0 {
		t.Fatalf("a read-only session changed something: %v", lines)
	}
}

func TestOperatorKeyCompletesAMessage(t *testing.T) {
	e := newEngine(t, 1)
	ts := startServer(t, e, nil)
	term := openTerm(t, ts.mustDial(ts.operator), 100, 30)
	term.waitScreen(waitLong, "m-1", "Active 1")
	term.press("l")
	term.waitScreen(waitLong, "Locked 1")
	waitUntil(t, waitLong, "the lock", func() bool { return counts(t, e, "orders").Locked == 1 })
	term.press("c")
	waitUntil(t, waitLong, "the complete", func() bool {
		c := counts(t, e, "orders")
		return c.Active == 0 && c.Locked == 0
	})
	term.press("q")
	if code := term.waitExit(waitLong); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	fp := gossh.FingerprintSHA256(ts.operator.PublicKey())
	lines := ts.audit.lines(t)
	if len(lines) != 2 {
		t.Fatalf("audit = %v, want a receive and a complete", lines)
	}
	for i, op := range []string{"receive", "complete"} {
		l := lines[i]
		if l["op"] != op || l["key"] != fp || l["role"] != "operator" || l["entity"] != "orders" || l["seq"] != 1.0 || l["message_id"] != "m-1" || l["result"] != "ok" {
			t.Errorf("audit line %d = %v, want %s of orders seq 1 m-1 by %s, ok", i, l, op, fp)
		}
	}
}

func TestResizeRerendersAtTheNewSize(t *testing.T) {
	ts := startServer(t, newEngine(t, 1), nil)
	term := openTerm(t, ts.mustDial(ts.reader), 80, 24)
	scr := term.waitScreen(waitLong, "m-1", "● connected")
	if row := rowWith(scr, "● connected"); row != 23 {
		t.Fatalf("status bar on row %d at 80x24, want 23:\n%s", row, scr)
	}
	term.resize(132, 40)
	deadline := time.Now().Add(waitLong)
	for {
		scr = term.screen.String()
		if rowWith(scr, "● connected") == 39 && strings.Contains(scr, "m-1") && maxWidth(scr) > 80 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen was not drawn again at 132x40:\n%s", scr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	term.resize(60, 20)
	deadline = time.Now().Add(waitLong)
	for rowWith(term.screen.String(), "● connected") != 19 {
		if time.Now().After(deadline) {
			t.Fatalf("the screen was not drawn again at 60x20:\n%s", term.screen.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rowWith returns the index of the first row of scr containing s (-1: none).
func rowWith(scr, s string) int {
	for i, r := range strings.Split(scr, "\n") {
		if strings.Contains(r, s) {
			return i
		}
	}
	return -1
}

// maxWidth returns the length in runes of the longest row.
func maxWidth(scr string) int {
	w := 0
	for _, r := range strings.Split(scr, "\n") {
		w = max(w, len([]rune(r)))
	}
	return w
}

func TestDisconnectReleasesTheSessionsLocks(t *testing.T) {
	e := newEngine(t, 3)
	ts := startServer(t, e, nil)
	// Another receiver's lock must survive the session's end.
	other, err := e.Receive(context.Background(), broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 1})
	if err != nil || len(other) != 1 {
		t.Fatal(err)
	}
	c := ts.mustDial(ts.operator)
	term := openTerm(t, c, 100, 30)
	term.waitScreen(waitLong, "m-2", "Active 2")
	term.press("l")
	waitUntil(t, waitLong, "the session's lock", func() bool { return counts(t, e, "orders").Locked == 2 })

	c.Close() // the connection drops without a quit
	waitUntil(t, waitLong, "the session's lock to be abandoned", func() bool {
		n := counts(t, e, "orders")
		return n.Locked == 1 && n.Active == 2
	})
	if err := e.Settle(context.Background(), broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: other[0].LockToken}); err != nil {
		t.Fatalf("the other receiver's lock was lost: %v", err)
	}
	// The session logs the release after the engine took it.
	var last map[string]any
	waitUntil(t, waitLong, "the release in the audit log", func() bool {
		lines := ts.audit.lines(t)
		last = lines[len(lines)-1]
		return last["op"] == "release"
	})
	if last["op"] != "release" || last["seq"] != 2.0 || last["message_id"] != "m-2" || last["cause"] != "session ended" || last["result"] != "ok" {
		t.Fatalf("last audit line = %v, want the release of seq 2 at session end", last)
	}
}

func TestFullServerRefusesWithAMessage(t *testing.T) {
	ts := startServer(t, newEngine(t, 1), func(c *Config) { c.MaxSessions = 1 })
	first := openTerm(t, ts.mustDial(ts.reader), 80, 24)
	first.waitScreen(waitLong, "m-1")
	second := openTerm(t, ts.mustDial(ts.operator), 80, 24)
	if code := second.waitExit(waitLong); code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	if got, want := second.stderr.String(), "peeklock: the server is full (1 sessions); try again later\r\n"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	// The slot comes back when the first session ends.
	first.press("q")
	first.waitExit(waitLong)
	third := openTerm(t, ts.mustDial(ts.operator), 80, 24)
	third.waitScreen(waitLong, "m-1")
}

func TestSessionWithoutPtyIsRefused(t *testing.T) {
	ts := startServer(t, newEngine(t, 1), nil)
	s, err := ts.mustDial(ts.operator).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr syncBuffer
	s.Stdout, s.Stderr = &stdout, &stderr
	err = s.Shell()
	if err == nil {
		err = s.Wait()
	}
	var ee *gossh.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 1 {
		t.Fatalf("session without a pty ended with %v, want exit status 1", err)
	}
	if got, want := stderr.String(), "peeklock: the dashboard needs a terminal; connect with ssh -t\n"; got != want || stdout.String() != "" {
		t.Fatalf("stderr %q stdout %q, want stderr %q", got, stdout.String(), want)
	}
}

func TestIdleTimeoutEndsTheSession(t *testing.T) {
	fc := clockwork.NewFakeClock()
	ts := startServer(t, newEngine(t, 1), func(c *Config) {
		c.Clock = fc
		c.IdleTimeout = time.Minute
	})
	term := openTerm(t, ts.mustDial(ts.reader), 100, 30)
	term.waitScreen(waitLong, "m-1")
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()

	if err := fc.BlockUntilContext(ctx, 1); err != nil { // the idle timer is armed
		t.Fatal(err)
	}
	fc.Advance(30 * time.Second)
	term.press("?") // input at 30 s: the help opens
	term.waitScreen(waitLong, "dead-letter")
	fc.Advance(40 * time.Second) // 70 s: idle for 40 s only; the timer re-arms
	if err := fc.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-term.exit:
		t.Fatalf("the session ended after 40 s idle (timeout 1 min): %v", err)
	default:
	}
	fc.Advance(20 * time.Second) // 90 s: idle for 60 s
	if code := term.waitExit(waitLong); code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	if got, want := term.stderr.String(), "peeklock: no input for 1m0s; the session is closed\r\n"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}

func TestHostKeyPersistsAcrossRestarts(t *testing.T) {
	ts := startServer(t, newEngine(t, 1), nil)
	var first gossh.PublicKey
	c, err := gossh.Dial("tcp", ts.addr, &gossh.ClientConfig{
		User: "oncall", Auth: []gossh.AuthMethod{gossh.PublicKeys(ts.reader)}, Timeout: 5 * time.Second,
		HostKeyCallback: func(_ string, _ net.Addr, key gossh.PublicKey) error { first = key; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := gossh.FingerprintSHA256(first); got != ts.srv.HostKeyFingerprint() {
		t.Fatalf("client saw host key %s, server reports %s", got, ts.srv.HostKeyFingerprint())
	}
	fi, err := os.Stat(ts.cfg.HostKeyPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key file: %v, %v; want mode 0600", fi, err)
	}

	ts.stop()
	ts.start()
	c, err = ts.dial(ts.reader, first) // FixedHostKey: fails if the key changed
	if err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	c.Close()
}

func TestIdleTimeoutOnTheRealClock(t *testing.T) {
	ts := startServer(t, newEngine(t, 1), func(c *Config) { c.IdleTimeout = 300 * time.Millisecond })
	start := time.Now()
	term := openTerm(t, ts.mustDial(ts.reader), 100, 30)
	if code := term.waitExit(waitLong); code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("the session ended after %s, before the idle timeout", took)
	}
	if got, want := term.stderr.String(), "peeklock: no input for 300ms; the session is closed\r\n"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}

func TestCommandsAreRefused(t *testing.T) {
	ts := startServer(t, newEngine(t, 1), nil)
	s, err := ts.mustDial(ts.operator).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	s.Stderr = &stderr
	err = s.Run("rm -rf /")
	var ee *gossh.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 1 {
		t.Fatalf("a command ended with %v, want exit status 1", err)
	}
	if got, want := stderr.String(), "peeklock: this server runs no commands; connect without one: ssh -t oncall@HOST\n"; got != want {
		t.Fatalf("stderr %q, want %q", got, want)
	}
}

func TestCloseGivesTheLocksBack(t *testing.T) {
	e := newEngine(t, 2)
	ts := startServer(t, e, nil)
	term := openTerm(t, ts.mustDial(ts.operator), 100, 30)
	term.waitScreen(waitLong, "m-2")
	term.press("l")
	waitUntil(t, waitLong, "the lock", func() bool { return counts(t, e, "orders").Locked == 1 })
	ts.stop() // Close waits for the session to give its lock back
	if c := counts(t, e, "orders"); c.Active != 2 || c.Locked != 0 {
		t.Fatalf("counts right after Close = %+v, want Active 2 Locked 0", c)
	}
	if _, err := e.Entities(context.Background()); err != nil {
		t.Fatalf("the shared client was closed with the server: %v", err)
	}
	select {
	case <-term.exit: // the connection was dropped
	case <-time.After(waitLong):
		t.Fatal("the session is still open after Close")
	}
}

func TestUnauthenticatedConnectionIsDropped(t *testing.T) {
	fc := clockwork.NewFakeClock()
	ts := startServer(t, newEngine(t, 0), func(c *Config) { c.Clock = fc })
	conn, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if err := fc.BlockUntilContext(ctx, 1); err != nil { // the authentication timer
		t.Fatal(err)
	}
	fc.Advance(authTimeout - time.Second)
	conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	banner := make([]byte, 64)
	n, err := conn.Read(banner)
	if err != nil || !strings.HasPrefix(string(banner[:n]), "SSH-2.0-peeklock") {
		t.Fatalf("read %q, %v; want the server's banner and the connection open", banner[:n], err)
	}
	fc.Advance(time.Second)
	conn.SetReadDeadline(time.Now().Add(waitLong))
	for err == nil {
		_, err = conn.Read(banner)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection is still open after %s without authentication", authTimeout)
	}
}

// TestMissingAuthorizedKeysWritesNothing refuses a missing authorized_keys
// file in Check and in New, and neither writes the host key.
func TestMissingAuthorizedKeysWritesNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{AuthorizedKeysPath: filepath.Join(dir, "missing"), HostKeyPath: HostKeyPathIn(dir)}
	if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), "authorized keys") {
		t.Fatalf("Check: %v, want the missing file named", err)
	}
	if _, err := New(cfg, newEngine(t, 0), nil); err == nil {
		t.Fatal("New started without its authorized keys")
	}
	if _, err := os.Stat(cfg.HostKeyPath); !os.IsNotExist(err) {
		t.Fatalf("a refused server wrote its host key: %v", err)
	}
	if err := (Config{}).Check(); err == nil {
		t.Fatal("Check accepts a config without authorized keys")
	}
}
