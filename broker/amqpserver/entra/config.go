package entra

import (
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

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

// section is the [entra_id] section as TOML decodes it.
type section struct {
	DefaultRole  *string        `toml:"default_role"`
	AcceptOpaque *bool          `toml:"accept_opaque_tokens"`
	Roles        map[string]any `toml:"roles"`
}

// ParseConfig parses the [entra_id] section of a TOML config file; other
// sections are ignored, and a file without the section gives
// DefaultConfig. Unknown keys and roles are errors of code
// broker.CodeInvalid.
func ParseConfig(data []byte) (Config, error) {
	var doc struct {
		Entra *section `toml:"entra_id"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return Config{}, &broker.Error{Code: broker.CodeInvalid, Message: "entra_id: bad configuration: " + err.Error(), Err: err}
	}
	var unknown []string
	for _, k := range md.Undecoded() {
		if len(k) > 1 && k[0] == "entra_id" && k[1] != "roles" {
			unknown = append(unknown, k.String())
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return Config{}, broker.Errorf(broker.CodeInvalid, "entra_id: unknown configuration key %s (known: default_role, accept_opaque_tokens, roles)", strings.Join(unknown, ", "))
	}
	cfg := DefaultConfig()
	s := doc.Entra
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

// LoadConfig reads the [entra_id] section of the TOML file at path; see
// ParseConfig.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, &broker.Error{Code: broker.CodeInvalid, Message: "entra_id: cannot read the configuration file: " + err.Error(), Err: err}
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		be := err.(*broker.Error)
		return Config{}, &broker.Error{Code: be.Code, Message: path + ": " + be.Message, Err: be.Err}
	}
	return cfg, nil
}
