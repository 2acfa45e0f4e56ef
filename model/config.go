package model

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

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
	// Line and Col locate what is wrong in the file, from 1; 0 when the
	// error is about the whole file.
	Line, Col int
	// Err is what is wrong.
	Err error
}

// Error returns "config <path>[:line:col]: <what>".
func (e *ConfigError) Error() string {
	where := e.Path
	if e.Line > 0 {
		where += fmt.Sprintf(":%d:%d", e.Line, e.Col)
	}
	return "config " + where + ": " + e.Err.Error()
}

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
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Config{}, &ConfigError{Path: path, Err: fs.ErrNotExist}
		}
		return Config{}, &ConfigError{Path: path, Err: err}
	}
	var c Config
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		return Config{}, parseError(path, data, err)
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
			line, col := keyPosition(data, keys[0])
			return Config{}, &ConfigError{Path: path, Line: line, Col: col, Err: fmt.Errorf("unknown setting(s): %s", strings.Join(keys, ", "))}
		}
	}
	if err := c.check(); err != nil {
		ce := &ConfigError{Path: path, Err: err}
		var ke *keyError
		if errors.As(err, &ke) {
			ce.Line, ce.Col = keyPosition(data, ke.key)
			ce.Err = ke.err
		}
		return Config{}, ce
	}
	return c, nil
}

// keyError is an error about the setting key (a dotted path: "theme",
// "keys.complete").
type keyError struct {
	key string
	err error
}

func (e *keyError) Error() string { return e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// lastKeyRE finds the key a TOML type error names.
var lastKeyRE = regexp.MustCompile(`\(last key "([^"]*)"\)`)

// parseError locates a TOML parse or type error in data.
func parseError(path string, data []byte, err error) *ConfigError {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line, col := pe.Position.Line, pe.Position.Col
		if col == 0 && pe.Position.Start > 0 && pe.Position.Start <= len(data) {
			lineStart := bytes.LastIndexByte(data[:pe.Position.Start], '\n') + 1
			col = utf8.RuneCount(data[lineStart:pe.Position.Start]) + 1
		}
		return &ConfigError{Path: path, Line: line, Col: max(col, 1), Err: errors.New(pe.Message)}
	}
	ce := &ConfigError{Path: path, Err: err}
	if m := lastKeyRE.FindStringSubmatch(err.Error()); m != nil {
		ce.Line, ce.Col = keyPosition(data, m[1])
		if _, rest, ok := strings.Cut(err.Error(), m[0]+": "); ok {
			ce.Err = errors.New(rest)
		}
	}
	return ce
}

// keyPosition returns the line and column (from 1) where the dotted key is
// set in the TOML text data, or 0, 0 when it cannot be found. It reads
// table headers and "key = value" lines, which is what a config file holds.
func keyPosition(data []byte, key string) (line, col int) {
	table := ""
	for i, raw := range strings.Split(string(data), "\n") {
		text := strings.TrimSpace(raw)
		if text == "" || text[0] == '#' {
			continue
		}
		if text[0] == '[' {
			name := strings.Trim(text, "[]")
			if j := strings.IndexByte(name, ']'); j >= 0 {
				name = name[:j]
			}
			table = unquoteKey(name)
			if table == key {
				return i + 1, strings.Index(raw, "[") + 1
			}
			continue
		}
		k, _, ok := strings.Cut(text, "=")
		if !ok {
			continue
		}
		full := unquoteKey(k)
		if table != "" {
			full = table + "." + full
		}
		if full == key {
			return i + 1, len(raw) - len(strings.TrimLeft(raw, " \t")) + 1
		}
	}
	return 0, 0
}

// unquoteKey turns a TOML dotted key ("a . \"b c\"") into "a.b c".
func unquoteKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

// check validates the values; an error names the setting (keyError).
func (c Config) check() error {
	if c.Theme != "" && !strings.EqualFold(c.Theme, "auto") {
		if _, err := themes.ByName(c.Theme); err != nil {
			return &keyError{"theme", err}
		}
	}
	if c.Refresh.Duration < 0 || (c.Refresh.Duration > 0 && c.Refresh.Duration < 50*time.Millisecond) {
		return &keyError{"refresh", fmt.Errorf("refresh %s: must be at least 50ms", c.Refresh.Duration)}
	}
	if c.LockCount < 0 {
		return &keyError{"lock_count", fmt.Errorf("lock_count %d: must be positive", c.LockCount)}
	}
	if len(c.Keys) > 0 {
		km := keymap.DefaultKeyMap()
		if err := km.Rebind(c.Keys); err != nil {
			var re *keymap.RebindError
			if errors.As(err, &re) {
				return &keyError{"keys." + re.Action, err}
			}
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
