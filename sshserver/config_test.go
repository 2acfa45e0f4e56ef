package sshserver

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
[theme]
name = "dark"   # other sections are not ours

[ssh]
addr = "127.0.0.1:2200"
host_key = "/data/ssh_host_ed25519_key"
authorized_keys = "/etc/peeklock/authorized_keys"
max_sessions = 3
idle_timeout = "90s"
export_dir = "/srv/exports"
export_max_bytes = 1000000
clipboard_max_bytes = 5000

[ssh.roles]
"SHA256:abc" = "operator"
"bob@phone" = "Read-Only"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Addr:               "127.0.0.1:2200",
		HostKeyPath:        "/data/ssh_host_ed25519_key",
		AuthorizedKeysPath: "/etc/peeklock/authorized_keys",
		MaxSessions:        3,
		IdleTimeout:        90 * time.Second,
		ExportDir:          "/srv/exports",
		ExportMaxBytes:     1000000,
		ClipboardMaxBytes:  5000,
		Roles:              map[string]Role{"SHA256:abc": RoleOperator, "bob@phone": RoleReadOnly},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got %+v\nwant %+v", cfg, want)
	}
}

func TestParseConfigOffAndEmpty(t *testing.T) {
	cfg, err := ParseConfig([]byte("[ssh]\nidle_timeout = \"off\"\n"))
	if err != nil || cfg.IdleTimeout != -1 {
		t.Fatalf("idle_timeout off: %v, %v; want -1", cfg.IdleTimeout, err)
	}
	cfg, err = ParseConfig([]byte("[other]\nx = 1\n"))
	if err != nil || !reflect.DeepEqual(cfg, Config{}) {
		t.Fatalf("no [ssh] section: %+v, %v; want the zero Config", cfg, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"[ssh]\nport = 22\n", "invalid request: ssh: unknown configuration key ssh.port (known: addr, host_key, authorized_keys, max_sessions, idle_timeout, export_dir, export_max_bytes, clipboard_max_bytes, roles)"},
		{"[ssh]\nidle_timeout = \"soon\"\n", `invalid request: ssh: idle_timeout "soon": want a positive duration such as "15m", or "off"`},
		{"[ssh]\nidle_timeout = \"-5m\"\n", `invalid request: ssh: idle_timeout "-5m": want a positive duration such as "15m", or "off"`},
		{"[ssh]\nmax_sessions = 0\n", "invalid request: ssh: max_sessions must be at least 1, got 0"},
		{"[ssh.roles]\n\"alice\" = \"admin\"\n", `invalid request: ssh: roles: "alice": unknown SSH role "admin": want "read-only" or "operator"`},
		{"[ssh]\naddr = \n", "invalid request: ssh: bad configuration: toml: line 2 (last key \"ssh.addr\"): expected value but found '\\n' instead"},
	} {
		_, err := ParseConfig([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseConfig(%q) = %v\nwant %s", tc.in, err, tc.want)
		}
		if !errors.Is(err, broker.ErrInvalid) {
			t.Errorf("ParseConfig(%q): %v is not ErrInvalid", tc.in, err)
		}
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peeklock.toml")
	if err := os.WriteFile(path, []byte("[ssh]\nmax_sessions = -2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path)
	want := "invalid request: " + path + ": ssh: max_sessions must be at least 1, got -2"
	if err == nil || err.Error() != want {
		t.Fatalf("LoadConfig: %v\nwant %s", err, want)
	}
	_, err = LoadConfig(path + ".missing")
	if err == nil || !strings.Contains(err.Error(), "cannot read the configuration file") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadConfig of a missing file: %v", err)
	}
}

func TestParseRole(t *testing.T) {
	for in, want := range map[string]Role{"operator": RoleOperator, " OPERATOR ": RoleOperator, "read-only": RoleReadOnly, "readonly": RoleReadOnly, "read_only": RoleReadOnly} {
		if got, err := ParseRole(in); err != nil || got != want {
			t.Errorf("ParseRole(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseRole(""); !errors.Is(err, broker.ErrInvalid) {
		t.Errorf("ParseRole(\"\") = %v, want ErrInvalid", err)
	}
	var zero Role
	if zero != RoleReadOnly || zero.String() != "read-only" || RoleOperator.String() != "operator" {
		t.Errorf("the zero role is %v, want read-only", zero)
	}
}

func TestConfigDefaults(t *testing.T) {
	if _, err := (Config{}).withDefaults(); err == nil || err.Error() != "invalid request: ssh: no authorized keys file: give --authorized-keys FILE (OpenSSH authorized_keys format)" {
		t.Fatalf("no authorized keys: %v", err)
	}
	c, err := Config{AuthorizedKeysPath: "k"}.withDefaults()
	if err != nil || c.Addr != DefaultAddr || c.MaxSessions != DefaultMaxSessions || c.IdleTimeout != DefaultIdleTimeout || c.Logger == nil || c.Audit != c.Logger || c.Clock == nil {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	if got := HostKeyPathIn("/data"); got != filepath.Join("/data", "ssh_host_ed25519_key") {
		t.Fatalf("HostKeyPathIn = %q", got)
	}
}
