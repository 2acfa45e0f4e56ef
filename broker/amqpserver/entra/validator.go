package entra

import (
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker/sas"
)

// Audience is Service Bus's audience in Entra ID tokens.
const Audience = "https://servicebus.azure.net"

// ClockSkew is how far exp and nbf may be off.
const ClockSkew = 5 * time.Minute

// OpaqueLifetime is how long an opaque token is valid when the client
// gives no expiry.
const OpaqueLifetime = time.Hour

// WarningLine is the one line a listener that accepts Entra ID tokens logs
// when it starts.
const WarningLine = "--entra-id: Entra ID tokens are accepted WITHOUT checking their signature (it cannot be checked offline); anyone who reaches this listener can act as any identity: for local development only"

// Identity is what a valid token grants.
type Identity struct {
	// Subject is the identity the roles were looked up by (object id, or
	// application id); empty for an opaque token.
	Subject string
	// Rights are the identity's rights.
	Rights sas.Rights
	// Expires is when the token stops being valid (its exp plus
	// ClockSkew).
	Expires time.Time
	// Opaque is set for a token that is not a JWT.
	Opaque bool
}

// Validator checks Entra ID tokens against a Config on a clock. Its methods
// are safe for concurrent use.
type Validator struct {
	cfg   Config
	clock clockwork.Clock
}

// NewValidator returns a validator; a nil clock means the real one.
func NewValidator(cfg Config, clock clockwork.Clock) *Validator {
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	return &Validator{cfg: cfg, clock: clock}
}

// Validate checks token for a namespace reached by the host names hosts
// (any port is ignored). expiresHint is the expiry the client gave beside
// the token (CBS put-token's expiration), used for opaque tokens only; zero
// means none. Errors are *broker.Error with broker.CodeUnauthorized.
func (v *Validator) Validate(token string, hosts []string, expiresHint time.Time) (Identity, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return Identity{}, unauthorized("the token is empty")
	}
	if len(token) > maxTokenLen {
		return Identity{}, unauthorized("the token is %d bytes long; at most %d are allowed", len(token), maxTokenLen)
	}
	now := v.clock.Now()
	if !looksLikeJWT(token) {
		if !v.cfg.AcceptOpaque {
			return Identity{}, unauthorized("the token is not a JWT, and accept_opaque_tokens is false")
		}
		exp := now.Add(OpaqueLifetime)
		if expiresHint.After(now) {
			exp = expiresHint
		}
		return Identity{Rights: v.cfg.DefaultRights, Expires: exp, Opaque: true}, nil
	}
	c, err := parseJWT(token)
	if err != nil {
		return Identity{}, err
	}
	if !audienceOK(c.Audience, hosts) {
		return Identity{}, unauthorized("the token's audience %q is not Service Bus's (%s) or this namespace's", strings.Join(c.Audience, ","), Audience)
	}
	if c.Expires == nil {
		return Identity{}, unauthorized("the token has no expiry (exp)")
	}
	exp := unixTime(*c.Expires)
	if !now.Before(exp.Add(ClockSkew)) {
		return Identity{}, unauthorized("the token expired at %s (it is now %s)", exp.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if c.NotBefore != nil {
		if nbf := unixTime(*c.NotBefore); now.Add(ClockSkew).Before(nbf) {
			return Identity{}, unauthorized("the token is not valid before %s (it is now %s)", nbf.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
		}
	}
	subject, rights := v.cfg.rightsOf(c.ObjectID, c.AppID, c.AZP)
	return Identity{Subject: subject, Rights: rights, Expires: exp.Add(ClockSkew)}, nil
}

// audienceOK reports whether one of the token's audiences is Service Bus's
// or names one of hosts.
func audienceOK(auds []string, hosts []string) bool {
	for _, a := range auds {
		a = strings.TrimSpace(a)
		if strings.EqualFold(strings.TrimRight(a, "/"), Audience) {
			return true
		}
		u, err := url.Parse(a)
		if err != nil || u.Host == "" {
			continue
		}
		for _, h := range hosts {
			if strings.EqualFold(hostOnly(u.Host), hostOnly(h)) && hostOnly(h) != "" {
				return true
			}
		}
	}
	return false
}

// hostOnly drops a port and IPv6 brackets.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.Trim(h, "[]")
}
