package entra

import (
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
)

// Config is the [entra_id] section of the config file.
type Config struct {
	// DefaultRights are the rights of an identity that Rights does not
	// name, and of opaque tokens.
	DefaultRights sas.Rights
	// Rights are rights by object id or application id (lower case).
	Rights map[string]sas.Rights
	// AcceptOpaque accepts tokens that are not JWTs (see the package
	// documentation).
	AcceptOpaque bool
}

// DefaultConfig is the configuration without an [entra_id] section: every
// identity is an Owner, opaque tokens are accepted.
func DefaultConfig() Config {
	return Config{DefaultRights: sas.AllRights, AcceptOpaque: true}
}

// rightsOf returns the identity roles are looked up by and its rights: the
// first of the ids the configuration names, else the first id present with
// the default rights.
func (c Config) rightsOf(ids ...string) (string, sas.Rights) {
	first := ""
	for _, id := range ids {
		if id == "" {
			continue
		}
		if first == "" {
			first = id
		}
		if r, ok := c.Rights[strings.ToLower(id)]; ok {
			return id, r
		}
	}
	return first, c.DefaultRights
}

// roleRights are the rights of Azure's built-in Service Bus data roles.
var roleRights = map[string]sas.Rights{
	"owner": sas.AllRights, "data owner": sas.AllRights, "azure service bus data owner": sas.AllRights,
	"sender": sas.Send, "data sender": sas.Send, "azure service bus data sender": sas.Send,
	"receiver": sas.Listen, "data receiver": sas.Listen, "azure service bus data receiver": sas.Listen,
	"none": 0,
}

// ParseRole returns the rights of a role name (Owner, Sender, Receiver,
// None, or Azure's full names such as "Azure Service Bus Data Sender"),
// without regard to case.
func ParseRole(name string) (sas.Rights, error) {
	r, ok := roleRights[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return 0, broker.Errorf(broker.CodeInvalid, "unknown role %q; the roles are Owner, Sender, Receiver and None", name)
	}
	return r, nil
}

// Section is the [entra_id] section of the config file as it was written,
// before its values are checked; what it leaves out is nil. The composition
// root fills it from the file, so that this package reads no file format.
type Section struct {
	DefaultRole  *string
	AcceptOpaque *bool
	// Roles are a role name (string) or a list of them ([]any of strings)
	// by object or application id.
	Roles map[string]any
}

// ConfigFrom returns the Config that the [entra_id] section of the config
// file describes (s is nil when the file has no such section, which gives
// DefaultConfig). Unknown roles are errors of code broker.CodeInvalid.
func ConfigFrom(s *Section) (Config, error) {
	var err error
	cfg := DefaultConfig()
	if s == nil {
		return cfg, nil
	}
	if s.DefaultRole != nil {
		if cfg.DefaultRights, err = ParseRole(*s.DefaultRole); err != nil {
			return Config{}, broker.Errorf(broker.CodeInvalid, "entra_id: default_role: %s", err.(*broker.Error).Message)
		}
	}
	if s.AcceptOpaque != nil {
		cfg.AcceptOpaque = *s.AcceptOpaque
	}
	if len(s.Roles) > 0 {
		cfg.Rights = make(map[string]sas.Rights, len(s.Roles))
	}
	for id, v := range s.Roles {
		if strings.TrimSpace(id) == "" {
			return Config{}, broker.Errorf(broker.CodeInvalid, "entra_id: roles: an empty id")
		}
		var names []string
		switch v := v.(type) {
		case string:
			names = []string{v}
		case []any:
			for _, x := range v {
				s, ok := x.(string)
				if !ok {
					return Config{}, broker.Errorf(broker.CodeInvalid, "entra_id: roles: %q: a role is a string, got %v", id, x)
				}
				names = append(names, s)
			}
		default:
			return Config{}, broker.Errorf(broker.CodeInvalid, "entra_id: roles: %q: want a role or a list of roles, got %v", id, v)
		}
		var r sas.Rights
		for _, n := range names {
			nr, err := ParseRole(n)
			if err != nil {
				return Config{}, broker.Errorf(broker.CodeInvalid, "entra_id: roles: %q: %s", id, err.(*broker.Error).Message)
			}
			r |= nr
		}
		cfg.Rights[strings.ToLower(strings.TrimSpace(id))] = r
	}
	return cfg, nil
}
