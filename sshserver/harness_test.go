package sshserver

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/model"
)

// testServer is a Server on 127.0.0.1:0 over an engine, with three client
// keys: an operator, a read-only key, and a key that is not authorised.
type testServer struct {
	t                          testing.TB
	eng                        *engine.Engine
	srv                        *Server
	cfg                        Config
	addr                       string
	dir                        string
	operator, reader, stranger gossh.Signer
	audit                      auditLog
	log                        syncBuffer
	served                     chan error
	// opts are the dashboard options of every role.
	opts model.Options
	// optsOf, when set, gives them instead (a test may make it fail).
	optsOf func(Role) model.Options
	// wrap, when set, wraps the listener (to count bytes).
	wrap func(net.Listener) net.Listener
}

// startServer starts a server over eng; mut may change the Config first.
func startServer(t testing.TB, eng *engine.Engine, mut func(*Config)) *testServer {
	t.Helper()
	ts := newTestServer(t, eng, mut)
	ts.start()
	return ts
}

// newTestServer prepares a server over eng without starting it. The
// dashboards refresh every 200 ms.
func newTestServer(t testing.TB, eng *engine.Engine, mut func(*Config)) *testServer {
	t.Helper()
	ts := &testServer{t: t, eng: eng, dir: t.TempDir(), operator: newSigner(t), reader: newSigner(t), stranger: newSigner(t)}
	ts.opts = model.Options{Refresh: 200 * time.Millisecond, Theme: "dark"}
	ak := filepath.Join(ts.dir, "authorized_keys")
	lines := authLine(ts.operator, "op@test") + "\n" + authLine(ts.reader, "ro@test") + "\n"
	if err := os.WriteFile(ak, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	ts.cfg = Config{
		HostKeyPath:        HostKeyPathIn(filepath.Join(ts.dir, "data")),
		AuthorizedKeysPath: ak,
		Roles:              map[string]Role{"op@test": RoleOperator},
		Audit:              ts.audit.logger(),
		Logger:             slog.New(slog.NewTextHandler(&ts.log, nil)),
	}
	if mut != nil {
		mut(&ts.cfg)
	}
	return ts
}

// start (re)starts the server with ts.cfg.
func (ts *testServer) start() {
	t := ts.t
	t.Helper()
	optsOf := ts.optsOf
	if optsOf == nil {
		optsOf = func(Role) model.Options { return ts.opts }
	}
	srv, err := New(ts.cfg, ts.eng, optsOf)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if ts.wrap != nil {
		l = ts.wrap(l)
	}
	ts.srv, ts.addr, ts.served = srv, l.Addr().String(), make(chan error, 1)
	go func() { ts.served <- srv.Serve(l) }()
	waitUntil(t, 5*time.Second, "the server to listen", func() bool { return srv.Addr() != nil })
	t.Cleanup(func() { ts.stop() })
}

// stop closes the server and checks that Serve returned ErrServerClosed.
func (ts *testServer) stop() {
	if ts.srv == nil {
		return
	}
	ts.srv.Close()
	if err := <-ts.served; !errors.Is(err, ErrServerClosed) {
		ts.t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	ts.srv = nil
}

// dial connects with key; hostKey, when set, must be the server's.
func (ts *testServer) dial(key gossh.Signer, hostKey gossh.PublicKey) (*gossh.Client, error) {
	hk := gossh.InsecureIgnoreHostKey()
	if hostKey != nil {
		hk = gossh.FixedHostKey(hostKey)
	}
	return gossh.Dial("tcp", ts.addr, &gossh.ClientConfig{
		User:            "oncall",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(key)},
		HostKeyCallback: hk,
		Timeout:         5 * time.Second,
	})
}

// mustDial connects with key and closes the client with the test.
func (ts *testServer) mustDial(key gossh.Signer) *gossh.Client {
	ts.t.Helper()
	c, err := ts.dial(key, nil)
	if err != nil {
		ts.t.Fatalf("dial: %v", err)
	}
	ts.t.Cleanup(func() { c.Close() })
	return c
}

// termSession is an SSH session with a pty whose output feeds a virtual
// terminal.
type termSession struct {
	t      testing.TB
	s      *gossh.Session
	in     io.WriteCloser
	screen *vtScreen
	raw    syncBuffer // the output as sent, escape sequences and all
	stderr syncBuffer
	exit   chan error
}

// openTerm opens a session with a w×h pty and starts the shell.
func openTerm(t testing.TB, c *gossh.Client, w, h int) *termSession {
	t.Helper()
	return openTermEnv(t, c, w, h)
}

// openTermEnv is openTerm with environment variables ("NAME=value") sent
// before the pty, as an OpenSSH client sends those of SendEnv.
func openTermEnv(t testing.TB, c *gossh.Client, w, h int, env ...string) *termSession {
	t.Helper()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	ts := &termSession{t: t, s: s, screen: newVTScreen(w, h), exit: make(chan error, 1)}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if err := s.Setenv(name, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RequestPty("xterm-256color", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if ts.in, err = s.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	s.Stdout, s.Stderr = io.MultiWriter(ts.screen, &ts.raw), &ts.stderr
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() { ts.exit <- s.Wait() }()
	return ts
}

// waitScreen waits until the screen shows every one of texts.
func (ts *termSession) waitScreen(total time.Duration, texts ...string) string {
	ts.t.Helper()
	var scr string
	deadline := time.Now().Add(total)
	for {
		scr = ts.screen.String()
		ok := true
		for _, s := range texts {
			ok = ok && strings.Contains(scr, s)
		}
		if ok {
			return scr
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("the screen does not show %q after %s:\n%s", texts, total, scr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// press types keys.
func (ts *termSession) press(keys string) {
	ts.t.Helper()
	if _, err := io.WriteString(ts.in, keys); err != nil {
		ts.t.Fatalf("typing %q: %v", keys, err)
	}
}

// resize changes the window size.
func (ts *termSession) resize(w, h int) {
	ts.t.Helper()
	ts.screen.Resize(w, h)
	if err := ts.s.WindowChange(h, w); err != nil {
		ts.t.Fatal(err)
	}
}

// waitExit waits for the session to end and returns its exit status.
func (ts *termSession) waitExit(total time.Duration) int {
	ts.t.Helper()
	select {
	case err := <-ts.exit:
		var ee *gossh.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			return ee.ExitStatus()
		}
		ts.t.Fatalf("session ended without an exit status: %v", err)
	case <-time.After(total):
		ts.t.Fatalf("the session did not end within %s; screen:\n%s", total, ts.screen.String())
	}
	return -1
}
