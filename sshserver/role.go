package sshserver

import (
	"strings"

	"github.com/peeklock/peeklock/broker"
)

// Role is what the holder of a key may do.
type Role uint8

// Roles. The zero Role is RoleReadOnly, so a key that the configuration does
// not name can look but not touch.
const (
	// RoleReadOnly may browse every entity but change nothing: no receive,
	// settle, renew, send, schedule, cancel, resubmit or purge.
	RoleReadOnly Role = iota
	// RoleOperator may do everything the dashboard can do.
	RoleOperator
)

// String returns the role's configuration name: "read-only" or "operator".
func (r Role) String() string {
	if r == RoleOperator {
		return "operator"
	}
	return "read-only"
}

// ParseRole parses a role name: "operator", or "read-only" (also spelled
// "readonly" or "read_only"). Case and surrounding space are ignored.
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "operator":
		return RoleOperator, nil
	case "read-only", "readonly", "read_only":
		return RoleReadOnly, nil
	}
	return RoleReadOnly, broker.Errorf(broker.CodeInvalid, "unknown SSH role %q: want \"read-only\" or \"operator\"", s)
}

// MarshalText returns the role's name.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses a role name with ParseRole.
func (r *Role) UnmarshalText(b []byte) error {
	v, err := ParseRole(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}
