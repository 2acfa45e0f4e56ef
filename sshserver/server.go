package sshserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/recover"
	"github.com/jonboulle/clockwork"
	gossh "golang.org/x/crypto/ssh"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/model"
)

// closeWait bounds how long Close waits for sessions to give their locks
// back.
const closeWait = 15 * time.Second

// authTimeout is how long a connection may take to authenticate; one that
// has not by then is dropped, so idle or slow connections cannot pile up.
const authTimeout = 30 * time.Second

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = &broker.Error{Code: broker.CodeClosed, Message: "the SSH server is closed"}

// Connection-context keys: the verified key's identity, and the flag that
// stops the authentication timer.
type (
	ctxIdentityKey struct{}
	ctxAuthedKey   struct{}
)

var (
	ctxIdentity ctxIdentityKey
	ctxAuthed   ctxAuthedKey
)

// Server serves the dashboard over SSH. Create it with New; it is safe for
// concurrent use.
type Server struct {
	cfg    Config
	client broker.Client
	opts   func(Role) model.Options
	keys   *keyRing
	ssh    *ssh.Server
	hostFP string

	mu       sync.Mutex
	ln       net.Listener
	closed   bool
	active   int            // sessions holding a slot
	sessions sync.WaitGroup // every running session handler
	nextID   uint64
}

// New returns a server that shows the dashboard over client, shared by all
// sessions, to the keys of cfg.AuthorizedKeysPath. opts gives the dashboard
// options of a role (nil: the zero Options); a read-only session is always
// read-only, whatever opts returns. New creates the host key when it does
// not exist yet; it fails when the authorized keys file cannot be read.
func New(cfg Config, client broker.Client, opts func(role Role) model.Options) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, broker.Errorf(broker.CodeInvalid, "ssh: no broker client")
	}
	// The authorized keys first: a server that cannot start writes no host key.
	keys, err := newKeyRing(cfg.AuthorizedKeysPath, cfg.Roles, cfg.Logger)
	if err != nil {
		return nil, err
	}
	signer, created, err := LoadOrCreateHostKey(cfg.HostKeyPath)
	if err != nil {
		return nil, err
	}
	hostFP := gossh.FingerprintSHA256(signer.PublicKey())
	switch {
	case cfg.HostKeyPath == "":
		cfg.Logger.Warn("ssh: the host key is not kept: clients will see a new one after a restart", "fingerprint", hostFP)
	case created:
		cfg.Logger.Info("ssh: generated a host key", "file", cfg.HostKeyPath, "fingerprint", hostFP)
	}
	s := &Server{cfg: cfg, client: client, opts: opts, keys: keys, hostFP: hostFP}
	// wish assembles the server; what it has no option for is set on the
	// server it makes. Its Bubble Tea middleware is not used: a session
	// needs what its program's Run returned (the exit message) and input
	// that notices idleness (idleInput), so handle runs the program itself.
	s.ssh, err = wish.NewServer(
		wish.WithAddress(cfg.Addr),
		wish.WithVersion("peeklock"),
		func(srv *ssh.Server) error { srv.AddHostKey(signer); return nil }, // before wish makes one of its own
		wish.WithPublicKeyAuth(func(_ ssh.Context, key ssh.PublicKey) bool {
			_, ok := s.keys.lookup(key)
			return ok
		}),
		// A panic in a session's handler ends that session, logged, and
		// not the server.
		wish.WithMiddleware(recover.MiddlewareWithLogger(panicLogger{cfg.Logger}, func(ssh.Handler) ssh.Handler { return s.handle })),
		func(srv *ssh.Server) error {
			srv.ServerConfigCallback = s.serverConfig
			srv.ConnCallback = s.armAuthTimeout
			srv.ConnectionFailedCallback = func(c net.Conn, err error) {
				s.cfg.Logger.Info("ssh: connection refused", "remote", c.RemoteAddr().String(), "err", err)
			}
			return nil
		},
	)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// panicLogger writes what wish's recover middleware reports to the log.
type panicLogger struct{ log *slog.Logger }

func (p panicLogger) Printf(format string, v ...any) {
	p.log.Error("ssh: a session's handler panicked", "panic", fmt.Sprintf(format, v...))
}

// serverConfig records the identity of the key that the client proved it
// holds. PublicKeyHandler also sees keys a client only offers, so the role
// comes from here, after the signature was verified.
func (s *Server) serverConfig(ctx ssh.Context) *gossh.ServerConfig {
	return &gossh.ServerConfig{
		VerifiedPublicKeyCallback: func(_ gossh.ConnMetadata, key gossh.PublicKey, perms *gossh.Permissions, _ string) (*gossh.Permissions, error) {
			id, ok := s.keys.lookup(key)
			if !ok {
				return nil, errors.New("ssh: key no longer authorized")
			}
			ctx.SetValue(ctxIdentity, id)
			if a, ok := ctx.Value(ctxAuthed).(*authTimer); ok {
				a.done()
			}
			return perms, nil
		},
	}
}

// authTimer drops a connection that does not authenticate in time.
type authTimer struct {
	authed atomic.Bool
	timer  clockwork.Timer
}

// done stops the timer: the connection has authenticated.
func (a *authTimer) done() {
	a.authed.Store(true)
	a.timer.Stop()
}

// armAuthTimeout drops the connection unless it authenticates within
// authTimeout.
func (s *Server) armAuthTimeout(ctx ssh.Context, c net.Conn) net.Conn {
	a := &authTimer{}
	a.timer = s.cfg.Clock.AfterFunc(authTimeout, func() {
		if !a.authed.Load() {
			c.Close()
		}
	})
	ctx.SetValue(ctxAuthed, a)
	return c
}

// HostKeyFingerprint returns the SHA256 fingerprint of the host key, for the
// log and for users to check on first connect.
func (s *Server) HostKeyFingerprint() string { return s.hostFP }

// Serve accepts SSH connections on l until Close; it returns
// ErrServerClosed after Close.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.ln = l
	s.mu.Unlock()
	s.cfg.Logger.Info("ssh: listening", "addr", l.Addr().String(), "host_key", s.hostFP)
	err := s.ssh.Serve(l)
	if errors.Is(err, ssh.ErrServerClosed) || s.isClosed() {
		return ErrServerClosed
	}
	return err
}

// Addr returns the address the server listens on, or nil before Serve.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops listening, drops every connection and waits (up to 15 s) for
// the sessions to end, so that the locks they held are given back before
// the caller closes the shared client. The shared client stays open.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.ssh.Close()
	done := make(chan struct{})
	go func() {
		s.sessions.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
		s.cfg.Logger.Warn("ssh: sessions still ending after close", "waited", closeWait)
	}
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// enter registers a session handler; false after Close.
func (s *Server) enter() (id uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, false
	}
	s.sessions.Add(1)
	s.nextID++
	return s.nextID, true
}

// acquire takes a session slot; false when the server is full.
func (s *Server) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active >= s.cfg.MaxSessions {
		return false
	}
	s.active++
	return true
}

// release gives a session slot back.
func (s *Server) release() {
	s.mu.Lock()
	s.active--
	s.mu.Unlock()
}
