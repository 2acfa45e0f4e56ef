package sshserver

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
)

// HostKeyFile is the name of the host key file in the data directory.
const HostKeyFile = "ssh_host_ed25519_key"

// Defaults of Config.
const (
	DefaultAddr        = ":2222"
	DefaultMaxSessions = 8
	DefaultIdleTimeout = 15 * time.Minute
)

// Config configures a Server.
type Config struct {
	// Addr is the address to listen on ("" : DefaultAddr); the caller
	// binds it and hands the listener to Serve.
	Addr string
	// HostKeyPath is the host key file. It is created with a new ed25519
	// key, mode 0600, when it does not exist, and reused after. Empty means
	// a new key on every start (clients then warn that the host key
	// changed); HostKeyPathIn gives the usual path in the data directory.
	HostKeyPath string
	// AuthorizedKeysPath is an OpenSSH authorized_keys file; only its keys
	// may connect. It is required, and read again when it changes.
	AuthorizedKeysPath string
	// Roles gives keys a role. A key is named by its fingerprint
	// ("SHA256:…", as ssh-keygen -lf prints it) or by its comment in the
	// authorized_keys file; a fingerprint entry wins over a comment entry.
	// A key that no entry names is read-only.
	Roles map[string]Role
	// MaxSessions is the most sessions at once (0: DefaultMaxSessions);
	// one more is refused with a one-line message and exit status 1.
	MaxSessions int
	// IdleTimeout ends a session that has had no input for that long
	// (0: DefaultIdleTimeout; negative: never).
	IdleTimeout time.Duration
	// Logger receives the server's own log: connections, refusals, problems
	// with the authorized_keys file (nil: discarded).
	Logger *slog.Logger
	// Audit receives one line for every operation a session runs that
	// changes something (nil: Logger).
	Audit *slog.Logger
	// Clock measures idle time (nil: the real clock).
	Clock clockwork.Clock
	// ExportDir is where operator sessions' exports (x) too large for the
	// clipboard are written, on the server ("": nowhere; such exports are
	// refused). Read-only sessions never write files. Small exports go to
	// the user's clipboard through OSC 52 for every role.
	ExportDir string
	// ExportMaxBytes bounds one export file (0: model.DefaultExportFileMax);
	// ClipboardMaxBytes bounds an export sent to the clipboard (0:
	// model.DefaultClipboardMax).
	ExportMaxBytes    int64
	ClipboardMaxBytes int
}

// HostKeyPathIn returns the host key path in the data directory dir.
func HostKeyPathIn(dir string) string { return filepath.Join(dir, HostKeyFile) }

// Check validates c as New would, without writing anything: the settings,
// and the authorized keys file, which must exist and parse. The command line
// runs it before it opens any listener or creates a host key.
func (c Config) Check() error {
	c, err := c.withDefaults()
	if err != nil {
		return err
	}
	_, err = newKeyRing(c.AuthorizedKeysPath, c.Roles, slog.New(slog.DiscardHandler))
	return err
}

// withDefaults fills in the defaults and checks what has none.
func (c Config) withDefaults() (Config, error) {
	if c.AuthorizedKeysPath == "" {
		return c, broker.Errorf(broker.CodeInvalid, "ssh: no authorized keys file: give --authorized-keys FILE (OpenSSH authorized_keys format)")
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxSessions < 0 {
		return c, broker.Errorf(broker.CodeInvalid, "ssh: max sessions must not be negative, got %d", c.MaxSessions)
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.ExportMaxBytes < 0 || c.ClipboardMaxBytes < 0 {
		return c, broker.Errorf(broker.CodeInvalid, "ssh: export limits must not be negative")
	}
	if c.ExportDir != "" {
		if st, err := os.Stat(c.ExportDir); err != nil || !st.IsDir() {
			return c, broker.Errorf(broker.CodeInvalid, "ssh: export_dir %q is not a directory", c.ExportDir)
		}
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Audit == nil {
		c.Audit = c.Logger
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	return c, nil
}
