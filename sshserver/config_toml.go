package sshserver

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/peeklock/peeklock/broker"
)

// sshSection is the [ssh] section of the configuration file:
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
//	"SHA256:4cBjL0ZSrZ…" = "operator"
//	"alice@laptop" = "operator"   # by the key's comment
//	"bob@phone" = "read-only"
type sshSection struct {
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

// LoadConfig reads the [ssh] section of the TOML file at path; see
// ParseConfig.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, &broker.Error{Code: broker.CodeInvalid, Message: "ssh: cannot read the configuration file: " + err.Error(), Err: err}
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		be := err.(*broker.Error)
		return Config{}, &broker.Error{Code: be.Code, Message: path + ": " + be.Message, Err: be.Err}
	}
	return cfg, nil
}

// ParseConfig parses the [ssh] section of a TOML configuration file and
// returns the Config it describes; what the section leaves out stays zero
// (the default). Other sections are ignored; an unknown key inside [ssh], a
// bad role or a bad duration is an error of code broker.CodeInvalid.
//
//	[ssh]
//	addr = ":2222"
//	host_key = "/var/lib/peeklock/ssh_host_ed25519_key"
//	authorized_keys = "/etc/peeklock/authorized_keys"
//	max_sessions = 8
//	idle_timeout = "15m"          # a Go duration, or "off"
//
//	[ssh.roles]
//	"SHA256:4cBjL0ZSrZ…" = "operator"   # by fingerprint
//	"alice@laptop" = "operator"         # by the key's comment
func ParseConfig(data []byte) (Config, error) {
	var doc struct {
		SSH *sshSection `toml:"ssh"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		// The parse error names the line.
		return Config{}, &broker.Error{Code: broker.CodeInvalid, Message: "ssh: bad configuration: " + err.Error(), Err: err}
	}
	var unknown []string
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "ssh" {
			unknown = append(unknown, k.String())
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return Config{}, broker.Errorf(broker.CodeInvalid, "ssh: unknown configuration key %s (known: addr, host_key, authorized_keys, max_sessions, idle_timeout, export_dir, export_max_bytes, clipboard_max_bytes, roles)",
			strings.Join(unknown, ", "))
	}
	var cfg Config
	s := doc.SSH
	if s == nil {
		return cfg, nil
	}
	if s.Addr != nil {
		cfg.Addr = *s.Addr
	}
	if s.HostKey != nil {
		cfg.HostKeyPath = *s.HostKey
	}
	if s.AuthorizedKeys != nil {
		cfg.AuthorizedKeysPath = *s.AuthorizedKeys
	}
	if s.MaxSessions != nil {
		if *s.MaxSessions < 1 {
			return Config{}, broker.Errorf(broker.CodeInvalid, "ssh: max_sessions must be at least 1, got %d", *s.MaxSessions)
		}
		cfg.MaxSessions = *s.MaxSessions
	}
	if s.IdleTimeout != nil {
		d, err := parseIdleTimeout(*s.IdleTimeout)
		if err != nil {
			return Config{}, err
		}
		cfg.IdleTimeout = d
	}
	if s.ExportDir != nil {
		cfg.ExportDir = *s.ExportDir
	}
	if s.ExportMax != nil {
		if *s.ExportMax < 1 {
			return Config{}, broker.Errorf(broker.CodeInvalid, "ssh: export_max_bytes must be at least 1, got %d", *s.ExportMax)
		}
		cfg.ExportMaxBytes = *s.ExportMax
	}
	if s.ClipboardMax != nil {
		if *s.ClipboardMax < 1 {
			return Config{}, broker.Errorf(broker.CodeInvalid, "ssh: clipboard_max_bytes must be at least 1, got %d", *s.ClipboardMax)
		}
		cfg.ClipboardMaxBytes = *s.ClipboardMax
	}
	if len(s.Roles) > 0 {
		cfg.Roles = make(map[string]Role, len(s.Roles))
		for name, v := range s.Roles {
			if strings.TrimSpace(name) == "" {
				return Config{}, broker.Errorf(broker.CodeInvalid, "ssh: roles: an empty key name")
			}
			r, err := ParseRole(v)
			if err != nil {
				return Config{}, broker.Errorf(broker.CodeInvalid, "ssh: roles: %q: %s", name, err.(*broker.Error).Message)
			}
			cfg.Roles[name] = r
		}
	}
	return cfg, nil
}

// parseIdleTimeout parses "15m", "1h30m" or "off".
func parseIdleTimeout(s string) (time.Duration, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "off", "never", "none":
		return -1, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, broker.Errorf(broker.CodeInvalid, "ssh: idle_timeout %q: want a positive duration such as \"15m\", or \"off\"", s)
	}
	return d, nil
}
