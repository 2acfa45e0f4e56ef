package sshserver

import (
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/internal/config"
)

// ConfigFrom returns the Config that the [ssh] section of the config file
// describes (config.Load reads and checks the file; s is nil when it has
// no such section). What the section leaves out stays zero (the default).
// A bad role, a bad duration or too few sessions is an error of code
// broker.CodeInvalid.
func ConfigFrom(s *config.SSH) (Config, error) {
	var cfg Config
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
	if err := setAtLeastOne(&cfg.MaxSessions, s.MaxSessions, "max_sessions"); err != nil {
		return Config{}, err
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
	if err := setAtLeastOne(&cfg.ExportMaxBytes, s.ExportMax, "export_max_bytes"); err != nil {
		return Config{}, err
	}
	if err := setAtLeastOne(&cfg.ClipboardMaxBytes, s.ClipboardMax, "clipboard_max_bytes"); err != nil {
		return Config{}, err
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

// setAtLeastOne sets *dst to the setting v of the file, when it is there,
// and fails unless it is at least 1.
func setAtLeastOne[N int | int64](dst *N, v *N, key string) error {
	if v == nil {
		return nil
	}
	if *v < 1 {
		return broker.Errorf(broker.CodeInvalid, "ssh: %s must be at least 1, got %d", key, *v)
	}
	*dst = *v
	return nil
}
