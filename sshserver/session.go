package sshserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"github.com/charmbracelet/colorprofile"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/model"
)

// Exit statuses of a session.
const (
	exitOK      = 0
	exitRefused = 1
)

// handle runs one SSH session: it refuses what it cannot serve with one line
// and exit status 1, and otherwise runs the dashboard until the user quits,
// the connection drops, the session is idle too long or the server closes.
func (s *Server) handle(sess ssh.Session) {
	num, ok := s.enter()
	if !ok {
		refuse(sess, "peeklock: the server is shutting down")
		return
	}
	defer s.sessions.Done()
	id, ok := sess.Context().Value(ctxIdentity).(identity)
	if !ok {
		// Cannot happen: only a verified key gets a session.
		refuse(sess, "peeklock: no verified public key")
		return
	}
	attrs := []any{
		slog.Uint64("session", num),
		slog.String("key", id.Fingerprint),
		slog.String("comment", id.Comment),
		slog.String("role", id.Role.String()),
		slog.String("user", sess.User()),
		slog.String("remote", sess.RemoteAddr().String()),
	}
	log := s.cfg.Logger.With(attrs...)

	if cmd := sess.RawCommand(); cmd != "" {
		log.Info("ssh: session refused: a command", "command", cmd)
		refuse(sess, "peeklock: this server runs no commands; connect without one: ssh -t "+sess.User()+"@HOST")
		return
	}
	pty, winch, ok := sess.Pty()
	if !ok {
		log.Info("ssh: session refused: no terminal")
		refuse(sess, "peeklock: the dashboard needs a terminal; connect with ssh -t")
		return
	}
	if !s.acquire() {
		go drain(winch) // a window change must not block the session's requests
		log.Info("ssh: session refused: the server is full", "max_sessions", s.cfg.MaxSessions)
		refuse(sess, fmt.Sprintf("peeklock: the server is full (%d sessions); try again later", s.cfg.MaxSessions))
		return
	}
	release := sync.OnceFunc(s.release)
	defer release()

	log.Info("ssh: session started", "term", pty.Term, "width", pty.Window.Width, "height", pty.Window.Height)
	sc := newSessionClient(s.client, id.Role, s.cfg.Audit.With(attrs...), id.actor(sess.User()))
	closeClient := sync.OnceFunc(func() { _ = sc.Close() }) // its locks go back even if run panics
	defer closeClient()
	end := s.run(sess, pty, winch, id.Role, sc)
	closeClient()
	// The slot is free before the client learns that the session ended, so
	// that a client that connects again at once is let in.
	release()
	switch {
	case end.idle:
		log.Info("ssh: session ended: idle", "idle_timeout", s.cfg.IdleTimeout)
		refuse(sess, fmt.Sprintf("peeklock: no input for %s; the session is closed", s.cfg.IdleTimeout))
	case end.err != nil && (errors.Is(end.err, tea.ErrProgramPanic) || !errors.Is(end.err, tea.ErrProgramKilled)):
		log.Error("ssh: the dashboard failed", "err", end.err)
		refuse(sess, "peeklock: the dashboard failed: "+end.err.Error())
	case end.err != nil:
		// Killed: the connection dropped or the server is closing.
		log.Info("ssh: session ended", "err", end.err)
		_ = sess.Exit(exitOK)
	default:
		log.Info("ssh: session ended")
		_ = sess.Exit(exitOK)
	}
}

// sessionEnd says why the dashboard of a session stopped.
type sessionEnd struct {
	idle bool  // the idle timeout ended it
	err  error // the program failed or was killed (connection dropped, server closed)
}

// run runs the dashboard on the session's pty until it ends.
func (s *Server) run(sess ssh.Session, pty ssh.Pty, winch <-chan ssh.Window, role Role, sc *sessionClient) sessionEnd {
	var opts model.Options
	if s.opts != nil {
		opts = s.opts(role)
	}
	opts.RemoteExport = s.remoteExport(role, sc)
	var c broker.Client = sc
	if role != RoleOperator {
		// The session client refuses changes already; the dashboard also
		// disables and explains the keys.
		opts.ReadOnly = true
		c = broker.ReadOnly(sc)
	}
	env := sessionEnviron(sess.Environ(), pty.Term)
	if lookupEnv(env, "NO_COLOR") != "" {
		opts.NoColor = true
	}
	m := model.New(c, opts)
	defer m.Close()

	ctx, cancel := context.WithCancel(sess.Context())
	defer cancel()
	in := newIdleInput(sess, s.cfg.Clock)
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(in),
		tea.WithOutput(sess),
		tea.WithWindowSize(pty.Window.Width, pty.Window.Height),
		tea.WithEnvironment(env),
		tea.WithColorProfile(colorProfile(env)),
		tea.WithoutSignalHandler(),
	)

	// Window changes; the channel closes with the session.
	go func() {
		for w := range winch {
			p.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
		}
	}()

	var idle atomic.Bool
	if s.cfg.IdleTimeout > 0 {
		go in.watch(ctx, s.cfg.IdleTimeout, func() {
			idle.Store(true)
			p.Quit()
		})
	}

	_, err := p.Run()
	return sessionEnd{idle: idle.Load(), err: err}
}

// drain empties the window changes of a session that shows no dashboard.
func drain(winch <-chan ssh.Window) {
	for range winch {
	}
}

// refuse writes msg as one line to the session's standard error and ends
// the session with exit status 1.
func refuse(sess ssh.Session, msg string) {
	_, _ = io.WriteString(sess.Stderr(), msg+"\n")
	_ = sess.Exit(exitRefused)
}

// sessionEnviron is the client's environment with TERM from the pty.
func sessionEnviron(env []string, term string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TERM=") {
			out = append(out, kv)
		}
	}
	if term == "" {
		term = "xterm-256color"
	}
	return append(out, "TERM="+term)
}

// lookupEnv returns the value of key in env ("" when unset).
func lookupEnv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// colorProfile picks the colour profile of the client's terminal from its
// environment (TERM, COLORTERM, NO_COLOR) and the terminfo entry of TERM.
func colorProfile(env []string) colorprofile.Profile {
	p := colorprofile.Env(env)
	if p == colorprofile.TrueColor || p <= colorprofile.ASCII {
		return p
	}
	return max(p, colorprofile.Terminfo(lookupEnv(env, "TERM")))
}
