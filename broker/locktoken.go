package broker

import "github.com/google/uuid"

// LockToken identifies one lock (a peek-locked message or a session lock).
// It is a UUID in RFC 4122 byte order; listeners convert to and from the .NET
// byte order of AMQP delivery tags.
type LockToken uuid.UUID

// String returns the token in the canonical UUID text form.
func (t LockToken) String() string { return uuid.UUID(t).String() }

// IsZero reports whether t is the zero token (no lock).
func (t LockToken) IsZero() bool { return t == LockToken{} }

// ParseLockToken parses the canonical UUID text form.
func ParseLockToken(s string) (LockToken, error) {
	u, err := uuid.Parse(s)
	if err != nil {
		return LockToken{}, &Error{Code: CodeInvalid, Message: "bad lock token " + quoteShort(s) + ": " + err.Error()}
	}
	return LockToken(u), nil
}

func quoteShort(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	return "\"" + s + "\""
}
