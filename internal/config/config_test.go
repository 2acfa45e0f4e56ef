package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	p := writeConfig(t, `
theme = "high-contrast"
refresh = "250ms"
export_dir = "/tmp/exports"
lock_count = 5

[keys]
complete = ["K"]
dead_letter = ["D", "ctrl+d"]

[connections.prod]
connection_string = "Endpoint=sb://prod.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=s"
entity = "orders"
read_only = true
`)
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Theme != "high-contrast" || cfg.Refresh.Duration != 250*time.Millisecond || cfg.LockCount != 5 ||
		cfg.Connections["prod"].Entity != "orders" || !cfg.Connections["prod"].ReadOnly {
		t.Fatalf("%+v", cfg)
	}
	if cfg.ExportDir != "/tmp/exports" || strings.Join(cfg.Keys["dead_letter"], ",") != "D,ctrl+d" || cfg.SSH != nil || cfg.EntraID != nil {
		t.Fatalf("%+v", cfg)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := map[string]string{
		`theme = "neon"`:                  `unknown theme "neon"`,
		`refresh = "soon"`:                `time: invalid duration "soon"`,
		`refresh = "1ms"`:                 "refresh 1ms: must be at least 50ms",
		`colour = "red"`:                  "unknown setting(s): colour",
		"[keys]\nexplode = [\"x\"]":       `keymap: action "explode": unknown action`,
		"[keys]\ncomplete = []":           `keymap: action "complete": no keys given`,
		`theme = `:                        "toml:",
		"[connections.x]\nurl = \"amqp\"": "unknown setting(s): connections.x.url",
	}
	for text, want := range cases {
		_, err := Load(writeConfig(t, text))
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
	}
	_, err := Load(filepath.Join(t.TempDir(), "missing.toml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestLoadConfigErrorsHaveLineAndColumn locates each kind of error in the
// file: syntax, types, unknown settings, bad values and key conflicts.
func TestLoadErrorsHaveLineAndColumn(t *testing.T) {
	cases := []struct{ text, want string }{
		{"refresh = \"1s\"\ntheme = ", `:2:8: unexpected EOF`},
		{"# c\n\n  lock_count = \"x\"", `:3:3: incompatible types`},
		{"refresh = \"1s\"\ntheme = \"neon\"", `:2:1: unknown theme "neon"`},
		{"# mine\n[keys]\n complete = [\"q\"]", `:3:2: keymap: action "complete": key "q" is also bound to "quit"`},
		{"theme = \"dark\"\ncolour = \"red\"", `:2:1: unknown setting(s): colour`},
		{"[connections.x]\nurl = \"amqp\"", `:2:1: unknown setting(s): connections.x.url`},
		{"refresh = \"soon\"", `:1:12: time: invalid duration "soon"`},
	}
	for _, tc := range cases {
		path := writeConfig(t, tc.text)
		_, err := Load(path)
		if err == nil || !strings.HasPrefix(err.Error(), "config "+path+tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, "config "+path+tc.want)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"}
	getenv := func(name string) string { return env[name] }
	if got := DefaultPath(getenv); got != "/x/cfg/peeklock/config.toml" {
		t.Fatalf("got %s", got)
	}
	delete(env, "XDG_CONFIG_HOME")
	if got := DefaultPath(getenv); got != filepath.Join("/home/u", ".config", "peeklock", "config.toml") {
		t.Fatalf("without XDG_CONFIG_HOME: got %s", got)
	}
}

// One load reads every section: the dashboard's, [ssh] and [entra_id].
func TestLoadEverySection(t *testing.T) {
	cfg, err := Load(writeConfig(t, `
theme = "dark"

[ssh]
addr = "127.0.0.1:2200"
max_sessions = 3
idle_timeout = "off"
[ssh.roles]
"alice@laptop" = "operator"

[entra_id]
default_role = "Receiver"
accept_opaque_tokens = false
[entra_id.roles]
"oid-1" = ["Sender", "Receiver"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Theme != "dark" || cfg.SSH == nil || *cfg.SSH.Addr != "127.0.0.1:2200" || *cfg.SSH.MaxSessions != 3 ||
		*cfg.SSH.IdleTimeout != "off" || cfg.SSH.Roles["alice@laptop"] != "operator" || cfg.SSH.AuthorizedKeys != nil {
		t.Fatalf("ssh: %+v", cfg.SSH)
	}
	if e := cfg.EntraID; e == nil || *e.DefaultRole != "Receiver" || *e.AcceptOpaque || len(e.Roles["oid-1"].([]any)) != 2 {
		t.Fatalf("entra_id: %+v", cfg.EntraID)
	}
	if cfg, err := Load(writeConfig(t, `theme = "dark"`)); err != nil || cfg.SSH != nil || cfg.EntraID != nil {
		t.Fatalf("no sections: %+v, %v", cfg, err)
	}
}

// A setting unknown in [ssh] or [entra_id], or of the wrong type there, is
// found by the one loader with its line and column, as in the dashboard's
// settings.
func TestLoadSectionErrorsHaveLineAndColumn(t *testing.T) {
	cases := []struct{ text, want string }{
		{"theme = \"dark\"\n[ssh]\nport = 22", `:3:1: unknown setting(s): ssh.port`},
		{"[ssh]\naddr = \":22\"\n  max_sessions = \"8\"", `:3:3: incompatible types`},
		{"[ssh]\naddr = ", `:2:7: unexpected EOF`},
		{"[entra_id]\ndefault_role = \"Sender\"\nbogus = 1", `:3:1: unknown setting(s): entra_id.bogus`},
		{"[entra_id]\naccept_opaque_tokens = \"yes\"", `:2:1: incompatible types`},
	}
	for _, tc := range cases {
		path := writeConfig(t, tc.text)
		_, err := Load(path)
		if err == nil || !strings.HasPrefix(err.Error(), "config "+path+tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, "config "+path+tc.want)
		}
	}
}

// TestKeymapErrorsFirst: a keymap error is the one reported, before the
// file's other problems, and a [keys] value of the wrong type says it is
// about the keymap.
func TestKeymapErrorsFirst(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"theme = \"neon\"\n[keys]\ncomplet = [\"x\"]", `:3:1: keymap: action "complet": unknown action`},
		{"bogus = 1\n[keys]\ncomplete = [\"c\", \"q\"]", `:3:1: keymap: action "complete": key "q" is also bound to "quit"`},
		{"[keys]\ncomplete = \"x\"", `:2:1: keymap: action "complete": want a list of keys, e.g. complete = ["x"]`},
	} {
		path := writeConfig(t, tc.text)
		_, err := Load(path)
		if err == nil || !strings.HasPrefix(err.Error(), "config "+path+tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, "config "+path+tc.want)
		}
	}
}
