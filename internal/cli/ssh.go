package cli

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/internal/config"
	"github.com/peeklock/peeklock/model"
	"github.com/peeklock/peeklock/sshserver"
)

// sshFlags are the flags of the SSH server.
type sshFlags struct {
	addr           string
	authorizedKeys string
	exportDir      string
}

func (s *sshFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.addr, "ssh", "", "serve the dashboard over SSH on this address (e.g. :2222)")
	fs.StringVar(&s.authorizedKeys, "authorized-keys", "", "the OpenSSH authorized_keys file of the keys that may connect (roles come from the [ssh] section of the config file)")
	fs.StringVar(&s.exportDir, "ssh-export-dir", "", "directory on the server for operator keys' exports (x) too big for the clipboard (or [ssh] export_dir)")
}

// sshPlan is a checked SSH server configuration, ready to start once the
// broker client exists.
type sshPlan struct {
	cfg  sshserver.Config
	base model.Options
	// hostKeyDir is the directory the host key goes into; it is created
	// only when the server starts.
	hostKeyDir string
}

// check validates everything the SSH server needs — the [ssh] section of
// the config file, the authorized keys file, the dashboard options — without
// writing anything. It returns nil when --ssh is not given.
func (s *sshFlags) check(d *dashboardFlags, dataDir string) (*sshPlan, error) {
	if s.addr == "" {
		if s.authorizedKeys != "" {
			return nil, usagef("--authorized-keys needs --ssh ADDR")
		}
		if s.exportDir != "" {
			return nil, usagef("--ssh-export-dir needs --ssh ADDR")
		}
		return nil, nil
	}
	if err := checkAddr("ssh", s.addr); err != nil {
		return nil, err
	}
	configPath := d.configPath()
	file, err := config.Load(configPath)
	if err != nil && (d.uiConfig != "" || !errors.Is(err, fs.ErrNotExist)) {
		return nil, usageError{err.Error()}
	}
	cfg, err := sshserver.ConfigFrom(file.SSH)
	if err != nil {
		return nil, usageError{configPath + ": " + localMessage(err)}
	}
	cfg.Addr = s.addr
	if s.authorizedKeys != "" {
		cfg.AuthorizedKeysPath = s.authorizedKeys
	}
	if s.exportDir != "" {
		cfg.ExportDir = s.exportDir
	}
	if cfg.AuthorizedKeysPath == "" {
		return nil, usagef("--ssh needs --authorized-keys FILE (or authorized_keys in the [ssh] section of the config file)")
	}
	if err := cfg.Check(); err != nil {
		return nil, usageError{localMessage(err)}
	}
	base, err := d.options()
	if err != nil {
		return nil, err
	}
	p := &sshPlan{cfg: cfg, base: base}
	if cfg.HostKeyPath == "" {
		p.hostKeyDir = dataDir
		if p.hostKeyDir == "" {
			p.hostKeyDir = filepath.Dir(config.DefaultPath(d.env.get))
		}
		p.cfg.HostKeyPath = sshserver.HostKeyPathIn(p.hostKeyDir)
	}
	return p, nil
}

// bind opens the SSH server's socket.
func (p *sshPlan) bind() (net.Listener, error) {
	l, err := net.Listen("tcp", p.cfg.Addr)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// serve serves the dashboard on c over SSH on l until ctx ends. The host
// key lives in the data directory, or beside the config file without one.
func (p *sshPlan) serve(ctx context.Context, c broker.Client, l net.Listener, log *slog.Logger) error {
	if p.hostKeyDir != "" {
		if err := os.MkdirAll(p.hostKeyDir, 0o700); err != nil {
			l.Close()
			return err
		}
	}
	cfg := p.cfg
	cfg.Logger = log
	base := p.base
	srv, err := sshserver.New(cfg, c, func(role sshserver.Role) model.Options {
		opts := base
		opts.ReadOnly = opts.ReadOnly || role != sshserver.RoleOperator
		return opts
	})
	if err != nil {
		l.Close()
		return err
	}
	log.Info("serving the dashboard over SSH", "addr", l.Addr().String(), "host_key", srv.HostKeyFingerprint())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case <-ctx.Done():
		return srv.Close()
	case err := <-errc:
		return err
	}
}
