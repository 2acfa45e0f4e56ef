package model

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/themes"
)

// Config is the dashboard's config file, $XDG_CONFIG_HOME/peeklock/config.toml:
//
//	theme = "dark"            # dark, light, high-contrast, no-color; empty: from the background
//	refresh = "1s"
//	export_dir = "/tmp"
//	lock_count = 1
//
//	[keys]
//	complete = ["c", "ctrl+d"]
//
//	[connections.prod]
//	connection_string = "Endpoint=sb://…"
//	entity = "orders"
//	read_only = true
type Config struct {
	Theme       string                `toml:"theme"`
	Refresh     Duration              `toml:"refresh"`
	ExportDir   string                `toml:"export_dir"`
	LockCount   int                   `toml:"lock_count"`
	Keys        map[string][]string   `toml:"keys"`
	Connections map[string]Connection `toml:"connections"`
}

// Connection is a named endpoint of the config file.
type Connection struct {
	ConnectionString string `toml:"connection_string"`
	Entity           string `toml:"entity"`
	ReadOnly         bool   `toml:"read_only"`
}

// Duration is a time.Duration written as "1s", "500ms" in the config file.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// ConfigError is the error of LoadConfig and Config.Apply: a file that
// cannot be read or parsed, or a value that makes no sense.
type ConfigError struct {
	// Path is the config file.
	Path string
	// Err is what is wrong.
	Err error
}

// Error returns "config <path>: <what>".
func (e *ConfigError) Error() string { return "config " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause (fs.ErrNotExist for a missing file).
func (e *ConfigError) Unwrap() error { return e.Err }

// DefaultConfigPath returns $XDG_CONFIG_HOME/peeklock/config.toml, or
// ~/.config/peeklock/config.toml when XDG_CONFIG_HOME is not set.
func DefaultConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".config")
		}
	}
	return filepath.Join(dir, "peeklock", "config.toml")
}

// LoadConfig reads and checks a config file. A missing file is a
// *ConfigError for which errors.Is(err, fs.ErrNotExist) holds, so callers
// can treat the default path as optional. Unknown settings, unknown themes,
// unknown key actions and non-positive intervals are errors.
func LoadConfig(path string) (Config, error) {
	var c Config
	md, err := toml.DecodeFile(path, &c)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Config{}, &ConfigError{Path: path, Err: fs.ErrNotExist}
		}
		return Config{}, &ConfigError{Path: path, Err: err}
	}
	if und := md.Undecoded(); len(und) > 0 {
		var keys []string
		for _, k := range und {
			// The [ssh] section belongs to the SSH server (sshserver.LoadConfig),
			// [entra_id] to the listener (package entra).
			if len(k) > 0 && (k[0] == "ssh" || k[0] == "entra_id") {
				continue
			}
			keys = append(keys, k.String())
		}
		if len(keys) > 0 {
			sort.Strings(keys)
			return Config{}, &ConfigError{Path: path, Err: fmt.Errorf("unknown setting(s): %s", strings.Join(keys, ", "))}
		}
	}
	if err := c.check(); err != nil {
		return Config{}, &ConfigError{Path: path, Err: err}
	}
	return c, nil
}

// check validates the values.
func (c Config) check() error {
	if c.Theme != "" && !strings.EqualFold(c.Theme, "auto") {
		if _, err := themes.ByName(c.Theme); err != nil {
			return err
		}
	}
	if c.Refresh.Duration < 0 || (c.Refresh.Duration > 0 && c.Refresh.Duration < 50*time.Millisecond) {
		return fmt.Errorf("refresh %s: must be at least 50ms", c.Refresh.Duration)
	}
	if c.LockCount < 0 {
		return fmt.Errorf("lock_count %d: must be positive", c.LockCount)
	}
	if len(c.Keys) > 0 {
		km := keymap.DefaultKeyMap()
		if err := km.Rebind(c.Keys); err != nil {
			return err
		}
	}
	return nil
}

// Apply sets the options the config file gives (theme, refresh interval,
// export directory, lock count, key bindings) on opts; settings of the
// command line should be applied after it.
func (c Config) Apply(opts *Options) error {
	if c.Theme != "" {
		opts.Theme = c.Theme
	}
	if c.Refresh.Duration > 0 {
		opts.Refresh = c.Refresh.Duration
	}
	if c.ExportDir != "" {
		opts.ExportDir = c.ExportDir
	}
	if c.LockCount > 0 {
		opts.LockCount = c.LockCount
	}
	if len(c.Keys) > 0 {
		if len(opts.KeyMap.Quit.Keys()) == 0 && len(opts.KeyMap.Up.Keys()) == 0 {
			opts.KeyMap = keymap.DefaultKeyMap()
		}
		if err := opts.KeyMap.Rebind(c.Keys); err != nil {
			return err
		}
	}
	return nil
}
