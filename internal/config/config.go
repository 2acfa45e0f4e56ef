// Package config is peeklock's config file, config.toml: the one loader
// of every section. The dashboard's settings and named connections are at
// the top level; [ssh] configures the SSH server (package sshserver turns
// the section into its Config) and [entra_id] the listener's Entra ID
// tokens (package entra). Load reads and checks the file at once, so that
// a mistake anywhere in it is reported with its line and column before
// anything starts.
package config

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
	"github.com/peeklock/peeklock/internal/userdirs"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/themes"
)

// File is the config file, $XDG_CONFIG_HOME/peeklock/config.toml:
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
//
//	[ssh]
//	authorized_keys = "/etc/peeklock/authorized_keys"
//
//	[entra_id]
//	default_role = "Receiver"
type File struct {
	Theme       string                `toml:"theme"`
	Refresh     Duration              `toml:"refresh"`
	ExportDir   string                `toml:"export_dir"`
	LockCount   int                   `toml:"lock_count"`
	Keys        map[string][]string   `toml:"keys"`
	Connections map[string]Connection `toml:"connections"`
	// SSH is the [ssh] section; nil when the file has none.
	SSH *SSH `toml:"ssh"`
	// EntraID is the [entra_id] section; nil when the file has none.
	EntraID *EntraID `toml:"entra_id"`
}

// SSH is the [ssh] section, for peeklock serve --ssh; what it leaves out is
// nil (the SSH server's default). Package sshserver checks the values.
//
//	[ssh]
//	addr = ":2222"
//	host_key = "/var/lib/peeklock/ssh_host_ed25519_key"
//	authorized_keys = "/etc/peeklock/authorized_keys"
//	max_sessions = 8
//	idle_timeout = "15m"          # a Go duration, or "off"
//	export_dir = "/var/lib/peeklock/exports"   # operators' export files
//	export_max_bytes = 67108864   # one export file
//	clipboard_max_bytes = 65536   # an export sent through OSC 52
//
//	[ssh.roles]
//	"SHA256:4cBjL0ZSrZ…" = "operator"   # by fingerprint
//	"alice@laptop" = "operator"         # by the key's comment
type SSH struct {
	Addr           *string           `toml:"addr"`
	HostKey        *string           `toml:"host_key"`
	AuthorizedKeys *string           `toml:"authorized_keys"`
	MaxSessions    *int              `toml:"max_sessions"`
	IdleTimeout    *string           `toml:"idle_timeout"`
	ExportDir      *string           `toml:"export_dir"`
	ExportMax      *int64            `toml:"export_max_bytes"`
	ClipboardMax   *int              `toml:"clipboard_max_bytes"`
	Roles          map[string]string `toml:"roles"`
}

// EntraID is the [entra_id] section, for peeklock serve --entra-id; what
// it leaves out is nil. Package entra checks the values (the composition
// root hands them over as an entra.Section).
//
//	[entra_id]
//	default_role = "Receiver"
//	accept_opaque_tokens = false
//
//	[entra_id.roles]
//	"11111111-2222-3333-4444-555555555555" = ["Sender", "Receiver"]
type EntraID struct {
	DefaultRole  *string `toml:"default_role"`
	AcceptOpaque *bool   `toml:"accept_opaque_tokens"`
	// Roles are a role name or a list of them by object or application id.
	Roles map[string]any `toml:"roles"`
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

// Error is the error of Load: a file that cannot be read or parsed, or a
// value that makes no sense.
type Error struct {
	// Path is the config file.
	Path string
	// Line and Col locate what is wrong in the file, from 1; 0 when the
	// error is about the whole file.
	Line, Col int
	// Err is what is wrong.
	Err error
}

// Error returns "config <path>[:line:col]: <what>".
func (e *Error) Error() string {
	where := e.Path
	if e.Line > 0 {
		where += fmt.Sprintf(":%d:%d", e.Line, e.Col)
	}
	return "config " + where + ": " + e.Err.Error()
}

// Unwrap returns the cause (fs.ErrNotExist for a missing file).
func (e *Error) Unwrap() error { return e.Err }

// DefaultPath returns $XDG_CONFIG_HOME/peeklock/config.toml, or
// ~/.config/peeklock/config.toml when XDG_CONFIG_HOME is not set, in the
// environment getenv reads (os.Getenv for the process's).
func DefaultPath(getenv userdirs.Getenv) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		if home, err := userdirs.Home(getenv); err == nil {
			dir = filepath.Join(home, ".config")
		}
	}
	return filepath.Join(dir, "peeklock", "config.toml")
}

// Load reads and checks a config file. A missing file is an *Error for
// which errors.Is(err, fs.ErrNotExist) holds, so callers can treat the
// default path as optional. Unknown settings (in every section), unknown
// themes, unknown key actions and non-positive intervals are errors.
func Load(path string) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, &Error{Path: path, Err: fs.ErrNotExist}
		}
		return File{}, &Error{Path: path, Err: err}
	}
	return Parse(path, data)
}

// Parse checks the text of a config file as Load does; path names the file
// in errors.
func Parse(path string, data []byte) (File, error) {
	var c File
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		return File{}, parseError(path, data, err)
	}
	// A keymap error first: a user rebinding keys fixes that section
	// before the rest (checkKeys).
	if err := c.checkKeys(); err != nil {
		return File{}, located(path, data, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		var keys []string
		for _, k := range und {
			keys = append(keys, k.String())
		}
		if len(keys) > 0 {
			sort.Strings(keys)
			line, col := keyPosition(data, keys[0])
			return File{}, &Error{Path: path, Line: line, Col: col, Err: fmt.Errorf("unknown setting(s): %s", strings.Join(keys, ", "))}
		}
	}
	if err := c.check(); err != nil {
		return File{}, located(path, data, err)
	}
	return c, nil
}

// located is err of the file path, at the setting a keyError names.
func located(path string, data []byte, err error) *Error {
	ce := &Error{Path: path, Err: err}
	var ke *keyError
	if errors.As(err, &ke) {
		ce.Line, ce.Col = keyPosition(data, ke.key)
		ce.Err = ke.err
	}
	return ce
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
func parseError(path string, data []byte, err error) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line, col := pe.Position.Line, pe.Position.Col
		if col == 0 && pe.Position.Start > 0 && pe.Position.Start <= len(data) {
			lineStart := bytes.LastIndexByte(data[:pe.Position.Start], '\n') + 1
			col = utf8.RuneCount(data[lineStart:pe.Position.Start]) + 1
		}
		return &Error{Path: path, Line: line, Col: max(col, 1), Err: errors.New(pe.Message)}
	}
	ce := &Error{Path: path, Err: err}
	if m := lastKeyRE.FindStringSubmatch(err.Error()); m != nil {
		ce.Line, ce.Col = keyPosition(data, m[1])
		if _, rest, ok := strings.Cut(err.Error(), m[0]+": "); ok {
			ce.Err = errors.New(rest)
		}
		if action, ok := strings.CutPrefix(m[1], "keys."); ok {
			ce.Err = fmt.Errorf(`keymap: action %q: want a list of keys, e.g. %s = ["x"] (%v)`, action, action, ce.Err)
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
func (c File) check() error {
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
	return c.checkKeys()
}

// checkKeys checks the [keys] section: every action known, every key given
// to one action only.
func (c File) checkKeys() error {
	if len(c.Keys) == 0 {
		return nil
	}
	km := keymap.DefaultKeyMap()
	if err := km.Rebind(c.Keys); err != nil {
		var re *keymap.RebindError
		if errors.As(err, &re) {
			return &keyError{"keys." + re.Action, err}
		}
		return err
	}
	return nil
}
