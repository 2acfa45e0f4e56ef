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
