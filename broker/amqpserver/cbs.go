package amqpserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// putToken answers a $cbs request: operation put-token with the token
// type, the audience (name) and the token as an amqp-value string. A valid
// token that covers its audience is kept for the connection (202); any
// other is refused with 401, and a valid one for an entity that does not
// exist with 404, as Service Bus does: that is how the SDKs learn that an
// entity is missing (the Go SDK's not-found error code comes from it).
func (c *conn) putToken(req *broker.Message) *response {
	props := req.ApplicationProperties
	op, _ := props[sbamqp.PropOperation].(string)
	if op != sbamqp.OpPutToken {
		return c.errorResponse(broker.Errorf(broker.CodeInvalid, "the $cbs node supports put-token, not %q", op), sbamqp.CBSAddress)
	}
	typ, _ := props[sbamqp.PropType].(string)
	name, _ := props[sbamqp.PropName].(string)
	var token string
	if req.BodyKind == broker.BodyValue {
		v, err := wire.DecodeAMQPValue(req.Body)
		if err != nil {
			return c.errorResponse(broker.Errorf(broker.CodeInvalid, "the put-token body is not an amqp-value: %v", err), sbamqp.CBSAddress)
		}
		token, _ = v.(string)
	}
	if token == "" {
		return c.errorResponse(broker.Errorf(broker.CodeUnauthorized, "the put-token request carries no token (want an amqp-value string)"), sbamqp.CBSAddress)
	}
	var g Grant
	var err error
	if typ == TokenTypeJWT && c.opts.EntraID != nil {
		g, err = c.entraGrant(req, name, token)
	} else {
		g, err = c.opts.Authorizer.Validate(typ, token)
	}
	if err != nil {
		if broker.CodeOf(err) != broker.CodeUnauthorized {
			err = &broker.Error{Code: broker.CodeUnauthorized, Message: err.Error(), Err: err}
		}
		c.logPeer("put-token refused", "audience", logsafe.Clip(name), "err", logsafe.Err(err))
		return c.errorResponse(err, sbamqp.CBSAddress)
	}
	if strings.Contains(name, "://") && !sas.Covers(g.Audience, name) {
		return c.errorResponse(sas.NotCovered(g.Audience, name), sbamqp.CBSAddress)
	}
	// A valid token proves the peer holds a key, even for an entity that
	// turns out not to exist.
	c.authenticate()
	if err := c.audienceExists(name); err != nil {
		c.logPeer("put-token refused", "audience", logsafe.Clip(name), "err", logsafe.Err(err))
		return c.errorResponse(err, sbamqp.CBSAddress)
	}
	if err := c.grants.add(g, c.clock.Now()); err != nil {
		return c.errorResponse(err, sbamqp.CBSAddress)
	}
	c.tokensChanged()
	c.log.Debug("token accepted", "audience", logsafe.Clip(g.Audience), "expires", g.Expires)
	return &response{status: http.StatusAccepted, desc: "Accepted"}
}

// audienceExists checks that the entity a put-token audience names exists
// (a sub-queue or $management node: its entity); the namespace itself
// always does. A missing one is CodeNotFound with Service Bus's words.
func (c *conn) audienceExists(audience string) error {
	_, entity := classify(normalizeAddress(audience))
	if entity == "" {
		return nil
	}
	path, _ := broker.SplitAddress(entity)
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	_, err := c.eng.Entity(ctx, path)
	if broker.CodeOf(err) != broker.CodeNotFound {
		return err
	}
	return &broker.Error{
		Code:       broker.CodeNotFound,
		Message:    fmt.Sprintf("The messaging entity '%s' could not be found. To know more visit https://aka.ms/sbResourceMgrExceptions.", audience),
		TrackingID: broker.TrackingIDOf(err),
		Entity:     path,
		Err:        err,
	}
}

// claimCBS makes l the connection's $cbs link of its direction: a
// connection has at most one sender and one receiver attached to $cbs, as
// on Service Bus, which refuses another with amqp:not-allowed (the Go SDK
// then opens a new connection: its TestAMQPLinksCBSLinkStillOpen).
func (c *conn) claimCBS(l *link) error {
	c.replyMu.Lock()
	defer c.replyMu.Unlock()
	held := &c.cbsLinks[0]
	if l.incoming() {
		held = &c.cbsLinks[1]
	}
	if *held != nil && *held != l {
		role := "receiver"
		if l.incoming() {
			role = "sender"
		}
		return linkError(wire.CondNotAllowed, "a %s is attached to $cbs on this connection already (link %q); only one sender and one receiver may be: close them, or open a new connection", role, (*held).name)
	}
	*held = l
	return nil
}

// releaseCBS forgets l as a $cbs link of the connection.
func (c *conn) releaseCBS(l *link) {
	c.replyMu.Lock()
	defer c.replyMu.Unlock()
	for i, h := range c.cbsLinks {
		if h == l {
			c.cbsLinks[i] = nil
		}
	}
}

// entraGrant validates a Microsoft Entra ID token (Options.EntraID). It
// grants its rights on the whole namespace the put-token names: Entra ID
// roles are assigned on the namespace, not on one entity.
func (c *conn) entraGrant(req *broker.Message, name, token string) (Grant, error) {
	c.grants.mu.Lock()
	openHost := c.grants.host
	c.grants.mu.Unlock()
	host := openHost
	if u, err := url.Parse(name); err == nil && u.Host != "" {
		host = u.Host
	}
	id, err := c.opts.EntraID.Validate(token, []string{host, openHost}, putTokenExpiry(req.ApplicationProperties[sbamqp.PropExpiration]))
	if err != nil {
		return Grant{}, err
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	c.log.Debug("Entra ID token accepted", "subject", id.Subject, "opaque", id.Opaque, "rights", id.Rights.String(), "expires", id.Expires)
	return Grant{Audience: "sb://" + host + "/", Expires: id.Expires, Rights: id.Rights}, nil
}

// putTokenExpiry reads a put-token's expiration property: a unix time as a
// string (the Go SDK) or a number, in seconds or (JavaScript's habit)
// milliseconds, or a timestamp; zero when absent or unreadable.
func putTokenExpiry(v any) time.Time {
	var n int64
	switch v := v.(type) {
	case string:
		n, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	case int64:
		n = v
	case int32:
		n = int64(v)
	case uint64:
		if v < 1<<62 {
			n = int64(v)
		}
	case uint32:
		n = int64(v)
	case float64:
		n = int64(v)
	case time.Time:
		return v
	}
	switch {
	case n <= 0:
		return time.Time{}
	case n > 1e11: // milliseconds: 1e11 seconds is the year 5138
		return time.UnixMilli(n)
	}
	return time.Unix(n, 0)
}
