package amqpserver

import (
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// Token types of CBS put-token requests.
const (
	TokenTypeSAS = sbamqp.TokenTypeSAS
	TokenTypeJWT = sbamqp.TokenTypeJWT
)

// Authorizer validates the tokens that clients put on the $cbs node. A
// Grant carries the rights it gives: none unless the Authorizer says so.
type Authorizer interface {
	// Validate checks a token of tokenType and returns what it grants.
	// Errors are *broker.Error with CodeUnauthorized.
	Validate(tokenType, token string) (Grant, error)
}

// Grant is access with Rights to the resources an audience URI covers
// (sas.Covers) until Expires.
type Grant struct {
	Audience string
	Expires  time.Time
	Rights   sas.Rights
	// KeyName names the key that signed the token, if any (shown in the
	// connections view).
	KeyName string
}

// sasAuthorizer validates shared access signatures with package sas.
type sasAuthorizer struct{ v *sas.Validator }

func newSASAuthorizer(keys map[string]string, rights map[string]sas.Rights, clock clockwork.Clock) Authorizer {
	return sasAuthorizer{sas.NewValidator(keys, clock).WithRights(rights)}
}

// Validate accepts SAS tokens only: Entra ID (JWT) tokens cannot be checked
// by a local listener.
func (a sasAuthorizer) Validate(tokenType, token string) (Grant, error) {
	if tokenType != TokenTypeSAS && tokenType != "" {
		return Grant{}, broker.Errorf(broker.CodeUnauthorized, "token type %q is not supported; put a shared access signature (%s)", tokenType, TokenTypeSAS)
	}
	t, err := a.v.Validate(token)
	if err != nil {
		return Grant{}, err
	}
	return Grant{Audience: t.Audience, Expires: t.Expiry, Rights: t.Rights, KeyName: t.KeyName}, nil
}

// maxGrants bounds the grants one connection keeps; a new token for an
// audience replaces the old one.
const maxGrants = 256

// grants are the tokens a connection has put, and the rights it has on
// every resource (a configured key's through SASL PLAIN, or all of them when
// authorization is off).
type grants struct {
	mu    sync.Mutex
	all   sas.Rights
	host  string // the host the client opened the connection for
	items []Grant
	// keyName is the key name of the last grant added.
	keyName string
}

// add records g, replacing a grant for the same audience.
func (gs *grants) add(g Grant, now time.Time) *broker.Error {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	kept := gs.items[:0]
	for _, old := range gs.items {
		if old.Expires.After(now) && !strings.EqualFold(old.Audience, g.Audience) {
			kept = append(kept, old)
		}
	}
	gs.items = kept
	if len(gs.items) >= maxGrants {
		return broker.Errorf(broker.CodeQuotaExceeded, "a connection keeps at most %d tokens", maxGrants)
	}
	gs.items = append(gs.items, g)
	if g.KeyName != "" {
		gs.keyName = g.KeyName
	}
	return nil
}

// check reports nil when a valid grant with the rights need covers the
// address (an entity path, "q/$management",
// "t/Subscriptions/s/$DeadLetterQueue"), or an unauthorized error that says
// why not: in Service Bus's words when a token covers it without the right.
func (gs *grants) check(address string, need sas.Rights, now time.Time) error {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.all.Has(need) && gs.all != 0 {
		return nil
	}
	expired, lacking := "", ""
	for _, g := range gs.items {
		uri := resourceURI(g.Audience, gs.host, address)
		if !sas.Covers(g.Audience, uri) {
			continue
		}
		if !g.Expires.After(now) {
			expired = g.Audience
			continue
		}
		if g.Rights.Has(need) {
			return nil
		}
		lacking = uri
	}
	if lacking != "" {
		return sas.MissingClaim(need&^gs.rightsFor(address, now), lacking)
	}
	if expired != "" {
		return broker.Errorf(broker.CodeUnauthorized, "the token for %q expired; put a new token on $cbs before attaching to %q", expired, address)
	}
	return broker.Errorf(broker.CodeUnauthorized, "no valid token covers %q; put one on $cbs first", address)
}

// nextExpiry returns the earliest expiry after now of the connection's
// grants, or the zero time when none will expire.
func (gs *grants) nextExpiry(now time.Time) time.Time {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	var next time.Time
	for _, g := range gs.items {
		if g.Expires.After(now) && (next.IsZero() || g.Expires.Before(next)) {
			next = g.Expires
		}
	}
	return next
}

// resource returns the URI of an address on the host the client opened the
// connection for, as errors name it.
func (gs *grants) resource(address string) string {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return "sb://" + gs.host + "/" + strings.TrimPrefix(address, "/")
}

// rightsFor returns the rights the valid grants covering address give
// together (under gs.mu).
func (gs *grants) rightsFor(address string, now time.Time) sas.Rights {
	r := gs.all
	for _, g := range gs.items {
		if g.Expires.After(now) && sas.Covers(g.Audience, resourceURI(g.Audience, gs.host, address)) {
			r |= g.Rights
		}
	}
	return r
}

// resourceURI builds the URI of an address for coverage checks: on the host
// the client opened the connection for, else on the audience's own host
// (a listener does not know every name it is reached by).
func resourceURI(audience, openHost, address string) string {
	host := openHost
	if host == "" {
		if u, err := url.Parse(audience); err == nil {
			host = u.Host
		}
	}
	return "sb://" + host + "/" + strings.TrimPrefix(address, "/")
}
