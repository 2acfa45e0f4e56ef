package remote

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// entraScope is the scope of Microsoft Entra ID tokens for Service Bus.
const entraScope = "https://servicebus.azure.net//.default"

// token is a credential for one audience.
type token struct {
	value  string
	typ    string
	issued time.Time
	expiry time.Time
}

// refreshAt is when a token should be renewed: at four fifths of its
// lifetime, and at most five minutes before it expires.
func (t token) refreshAt() time.Time {
	life := t.expiry.Sub(t.issued)
	margin := life / 5
	if margin > 5*time.Minute {
		margin = 5 * time.Minute
	}
	return t.expiry.Add(-margin)
}

// tokenSource makes tokens for audiences.
type tokenSource interface {
	token(ctx context.Context, audience string) (token, error)
	// renewable reports whether a new token can be had before the old one
	// expires (false for a ready-made signature).
	renewable() bool
	// httpAuthorization returns the Authorization header for a request to
	// url of the admin API.
	httpAuthorization(ctx context.Context, url string) (string, error)
}

// keySigner signs SAS tokens with a shared access key.
type keySigner struct {
	keyName, key string
	lifetime     time.Duration
	clock        clockwork.Clock
}

func (s *keySigner) token(_ context.Context, audience string) (token, error) {
	now := s.clock.Now()
	exp := now.Add(s.lifetime)
	// The signature covers whole seconds: renew against the truncated expiry.
	exp = time.Unix(exp.Unix(), 0)
	return token{value: sas.Sign(audience, s.keyName, s.key, exp), typ: sbamqp.TokenTypeSAS, issued: now, expiry: exp}, nil
}

func (s *keySigner) renewable() bool { return true }

func (s *keySigner) httpAuthorization(ctx context.Context, url string) (string, error) {
	t, err := s.token(ctx, url)
	return t.value, err
}

// readySignature is a ready-made SharedAccessSignature from the connection
// string: it cannot be renewed, and fails once expired.
type readySignature struct {
	value  string
	expiry time.Time
	clock  clockwork.Clock
}

func (s *readySignature) token(context.Context, string) (token, error) {
	now := s.clock.Now()
	if !s.expiry.After(now) {
		return token{}, &broker.Error{Code: broker.CodeUnauthorized,
			Message: "the SharedAccessSignature of the connection string expired at " + s.expiry.UTC().Format(time.RFC3339) + "; get a new one"}
	}
	return token{value: s.value, typ: sbamqp.TokenTypeSAS, issued: now, expiry: s.expiry}, nil
}

func (s *readySignature) renewable() bool { return false }

func (s *readySignature) httpAuthorization(ctx context.Context, _ string) (string, error) {
	t, err := s.token(ctx, "")
	return t.value, err
}

// entraSource gets Microsoft Entra ID tokens from a credential.
type entraSource struct {
	cred  azcore.TokenCredential
	clock clockwork.Clock
}

func newEntraSource(cred azcore.TokenCredential, clock clockwork.Clock) (*entraSource, error) {
	if cred == nil {
		c, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, &broker.Error{Code: broker.CodeUnauthorized, Message: "no Microsoft Entra ID credential is available: " + firstLine(err.Error()), Err: err}
		}
		cred = c
	}
	return &entraSource{cred: cred, clock: clock}, nil
}

func (s *entraSource) token(ctx context.Context, _ string) (token, error) {
	at, err := s.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{entraScope}})
	if err != nil {
		return token{}, &broker.Error{Code: broker.CodeUnauthorized, Message: "getting a Microsoft Entra ID token failed: " + firstLine(err.Error()), Err: err}
	}
	return token{value: at.Token, typ: sbamqp.TokenTypeJWT, issued: s.clock.Now(), expiry: at.ExpiresOn}, nil
}

func (s *entraSource) renewable() bool { return true }

func (s *entraSource) httpAuthorization(ctx context.Context, _ string) (string, error) {
	t, err := s.token(ctx, "")
	if err != nil {
		return "", err
	}
	return "Bearer " + t.value, nil
}

// newTokenSource picks the token source of a Service Bus connection.
func newTokenSource(cfg Config) (tokenSource, error) {
	cs := cfg.Conn
	switch {
	case cs.Entra:
		return newEntraSource(cfg.Credential, cfg.Clock)
	case cs.SharedAccessSignature != "":
		return &readySignature{value: cs.SharedAccessSignature, expiry: sasExpiry(cs.SharedAccessSignature), clock: cfg.Clock}, nil
	case cs.Key != "":
		return &keySigner{keyName: cs.KeyName, key: cs.Key, lifetime: cfg.TokenLifetime, clock: cfg.Clock}, nil
	}
	return nil, invalid("it has no credential for a Service Bus endpoint")
}

// audience returns the CBS audience of a node address.
func (c *Client) audience(address string) string {
	return "sb://" + c.cfg.Conn.Host + "/" + strings.TrimPrefix(address, "/")
}

// claimPath is the entity whose token covers address: a token's audience
// covers every address below it (the sub-queues and $management nodes), so
// one claim per entity is enough, and endpoints limit the claims of a
// connection (peeklock serve keeps 256).
func claimPath(address string) string {
	p := strings.TrimSuffix(address, sbamqp.ManagementSuffix)
	lp := strings.ToLower(p)
	for _, suffix := range []string{"/$transfer/$deadletterqueue", "/$deadletterqueue"} {
		if strings.HasSuffix(lp, suffix) {
			return p[:len(p)-len(suffix)]
		}
	}
	return p
}

// claim is a token put on the $cbs node of one connection.
type claim struct {
	audience string
	tok      token
}

// ensureClaim puts a token for address on cn's $cbs node unless a valid one
// is there already. Generic brokers have no $cbs node.
func (c *Client) ensureClaim(ctx context.Context, cn *connection, address string) error {
	if c.tokens == nil {
		return nil
	}
	aud := c.audience(claimPath(address))
	now := c.clock.Now()
	cn.mu.Lock()
	cl, ok := cn.claims[aud]
	cn.mu.Unlock()
	if ok && (cl.tok.expiry.After(now) && (!c.tokens.renewable() || now.Before(cl.tok.refreshAt()))) {
		return nil
	}
	return c.putToken(ctx, cn, aud)
}

// putToken gets a token for aud and puts it on cn's $cbs node.
func (c *Client) putToken(ctx context.Context, cn *connection, aud string) error {
	cn.claimMu.Lock()
	defer cn.claimMu.Unlock()
	tok, err := c.tokens.token(ctx, aud)
	if err != nil {
		return err
	}
	v, err := c.link(ctx, cn, "rpc|$cbs", func(ctx context.Context) (linkCloser, error) {
		l, err := newRPCLink(ctx, cn.amqp, sbamqp.CBSAddress)
		if err != nil {
			return nil, err
		}
		return l, nil
	})
	if err != nil {
		return mapErr(err, "authorize", "")
	}
	l := v.(*rpcLink)
	props := map[string]any{
		sbamqp.PropOperation:  sbamqp.OpPutToken,
		sbamqp.PropType:       tok.typ,
		sbamqp.PropName:       aud,
		sbamqp.PropExpiration: strconv.FormatInt(tok.expiry.Unix(), 10),
	}
	if _, err := l.call(ctx, sbamqp.OpPutToken, aud, props, tok.value); err != nil {
		if l.broken() {
			c.dropLink(cn, "rpc|$cbs", l)
		}
		if be, ok := err.(*broker.Error); ok && be.Code == broker.CodeUnauthorized {
			be.Message = "the endpoint refused the token for " + aud + ": " + be.Message
		}
		return err
	}
	cn.mu.Lock()
	cn.claims[aud] = claim{audience: aud, tok: tok}
	cn.mu.Unlock()
	c.kickRefresher()
	return nil
}

// refreshLoop renews the claims of the current connection before they
// expire, on the injected clock.
func (c *Client) refreshLoop() {
	defer c.wg.Done()
	for {
		wait := time.Hour
		cn := c.currentConn()
		if cn != nil && c.tokens != nil && c.tokens.renewable() {
			now := c.clock.Now()
			cn.mu.Lock()
			for _, cl := range cn.claims {
				if d := cl.tok.refreshAt().Sub(now); d < wait {
					wait = d
				}
			}
			cn.mu.Unlock()
		}
		c.log.Debug("token refresh loop", "wait", wait)
		if wait <= 0 {
			c.refreshDue(cn)
			continue
		}
		after := c.clock.After(wait)
		c.nextRefresh.Store(c.clock.Now().Add(wait).UnixNano())
		select {
		case <-after:
			if cn != nil {
				c.refreshDue(cn)
			}
		case <-c.kick:
		case <-c.done:
			return
		}
	}
}

// refreshDue renews every claim of cn that is due. Failures are logged and
// retried after a backoff; an operation that needs the claim reports them.
func (c *Client) refreshDue(cn *connection) {
	if cn == nil {
		return
	}
	now := c.clock.Now()
	var due []string
	cn.mu.Lock()
	for aud, cl := range cn.claims {
		if !now.Before(cl.tok.refreshAt()) {
			due = append(due, aud)
		}
	}
	cn.mu.Unlock()
	c.log.Debug("renewing tokens", "due", len(due))
	for _, aud := range due {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
		err := c.putToken(ctx, cn, aud)
		cancel()
		if err != nil {
			c.log.Warn("token renewal failed", "audience", aud, "err", err)
			// Push the claim's refresh back by a backoff so the loop does
			// not spin; it stays valid until its own expiry.
			cn.mu.Lock()
			if cl, ok := cn.claims[aud]; ok {
				cl.tok.issued = c.clock.Now()
				if cl.tok.expiry.Sub(cl.tok.issued) < c.cfg.MinBackoff*5 {
					delete(cn.claims, aud)
				} else {
					cn.claims[aud] = cl
				}
			}
			cn.mu.Unlock()
			select {
			case <-c.clock.After(c.cfg.MinBackoff):
			case <-c.done:
				return
			}
		}
	}
}

// kickRefresher makes the refresh loop recompute its next wake-up.
func (c *Client) kickRefresher() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
