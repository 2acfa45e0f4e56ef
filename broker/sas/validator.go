package sas

import (
	"crypto/hmac"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
)

// expiryLayout is how Service Bus writes a token's expiry in its error
// messages (.NET's "u" format).
const expiryLayout = "2006-01-02 15:04:05Z"

// Validator checks tokens against a fixed set of keys. It is safe for
// concurrent use.
type Validator struct {
	keys   map[string][]byte
	rights map[string]Rights // by key name; a key not named has AllRights
	clock  clockwork.Clock
}

// NewValidator returns a validator for keys (key name to key). An empty or
// nil map means DefaultKeys(). The map is copied. A nil clock means the real
// clock.
func NewValidator(keys map[string]string, clock clockwork.Clock) *Validator {
	if len(keys) == 0 {
		keys = DefaultKeys()
	}
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	v := &Validator{keys: make(map[string][]byte, len(keys)), clock: clock}
	for name, key := range keys {
		v.keys[name] = []byte(key)
	}
	return v
}

// WithRights limits keys to rights (by key name; a key not in the map keeps
// AllRights) and returns v. Call it before v is used.
func (v *Validator) WithRights(rights map[string]Rights) *Validator {
	v.rights = make(map[string]Rights, len(rights))
	for name, r := range rights {
		v.rights[name] = r
	}
	return v
}

// RightsOf returns the rights of the key named name.
func (v *Validator) RightsOf(name string) Rights {
	if r, ok := v.rights[name]; ok {
		return r
	}
	return AllRights
}

// Validate parses token and checks that a configured key of its key name
// signed it and that it has not expired (a token is valid while the clock
// is before its expiry); the token's Rights are its key's. Errors are
// *broker.Error with CodeUnauthorized.
func (v *Validator) Validate(token string) (*Token, error) {
	t, err := Parse(token)
	if err != nil {
		return nil, err
	}
	key, ok := v.keys[t.KeyName]
	if !ok {
		return nil, broker.Errorf(broker.CodeUnauthorized, "unknown key name %q", clip(t.KeyName))
	}
	if !hmac.Equal(mac(key, t.signed), t.signature) {
		return nil, broker.Errorf(broker.CodeUnauthorized, "the signature does not match key %q", t.KeyName)
	}
	if now := v.clock.Now(); !now.Before(t.Expiry) {
		// Service Bus's words (the Go SDK's Expired SAS tests check them),
		// with the time it is here, for clock skew.
		return nil, broker.Errorf(broker.CodeUnauthorized, "ExpiredToken: The token is expired. Expiration time: '%s'. Time here: '%s'.",
			t.Expiry.Format(expiryLayout), now.UTC().Format(expiryLayout))
	}
	t.Rights = v.RightsOf(t.KeyName)
	return t, nil
}

// Authorize validates token and checks that its audience covers resource
// (see Covers).
func (v *Validator) Authorize(token, resource string) (*Token, error) {
	t, err := v.Validate(token)
	if err != nil {
		return nil, err
	}
	if !Covers(t.Audience, resource) {
		return nil, NotCovered(t.Audience, resource)
	}
	return t, nil
}

// NotCovered is the error of a valid token whose audience does not cover
// resource.
func NotCovered(audience, resource string) *broker.Error {
	return broker.Errorf(broker.CodeUnauthorized, "the token for %q does not cover %q", clip(audience), resource)
}
