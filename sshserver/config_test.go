package sshserver

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/internal/config"
)

// parseConfig reads the [ssh] section of a config file's text as
// peeklock serve --ssh does: config.Parse, then ConfigFrom.
func parseConfig(text string) (Config, error) {
	f, err := config.Parse("config.toml", []byte(text))
	if err != nil {
		return Config{}, err
	}
	return ConfigFrom(f.SSH)
}

func TestConfigFrom(t *testing.T) {
	cfg, err := parseConfig(`
theme = "dark"   # the dashboard's settings are not ours

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
`)
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

func TestConfigFromOffAndEmpty(t *testing.T) {
	cfg, err := parseConfig("[ssh]\nidle_timeout = \"off\"\n")
	if err != nil || cfg.IdleTimeout != -1 {
		t.Fatalf("idle_timeout off: %v, %v; want -1", cfg.IdleTimeout, err)
	}
	cfg, err = parseConfig("theme = \"dark\"\n")
	if err != nil || !reflect.DeepEqual(cfg, Config{}) {
		t.Fatalf("no [ssh] section: %+v, %v; want the zero Config", cfg, err)
	}
}

func TestConfigFromErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"[ssh]\nidle_timeout = \"soon\"\n", `invalid request: ssh: idle_timeout "soon": want a positive duration such as "15m", or "off"`},
		{"[ssh]\nidle_timeout = \"-5m\"\n", `invalid request: ssh: idle_timeout "-5m": want a positive duration such as "15m", or "off"`},
		{"[ssh]\nmax_sessions = 0\n", "invalid request: ssh: max_sessions must be at least 1, got 0"},
		{"[ssh.roles]\n\"alice\" = \"admin\"\n", `invalid request: ssh: roles: "alice": unknown SSH role "admin": want "read-only" or "operator"`},
	} {
		_, err := parseConfig(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ConfigFrom(%q) = %v\nwant %s", tc.in, err, tc.want)
		}
		if !errors.Is(err, broker.ErrInvalid) {
			t.Errorf("ConfigFrom(%q): %v is not ErrInvalid", tc.in, err)
		}
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
