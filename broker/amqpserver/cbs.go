package amqpserver

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/amqpserver/sas"
)

// putToken answers a $cbs request: operation put-token with the token
// type, the audience (name) and the token as an amqp-value string. A valid
// token that covers its audience is kept for the connection (202); any
// other is refused with 401.
func (c *conn) putToken(req *broker.Message) *response {
	props := req.ApplicationProperties
	op, _ := props[propOperation].(string)
	if op != "put-token" {
		return c.errorResponse(broker.Errorf(broker.CodeInvalid, "the $cbs node supports put-token, not %q", op), cbsAddress)
	}
	typ, _ := props["type"].(string)
	name, _ := props["name"].(string)
	var token string
	if req.BodyKind == broker.BodyValue {
		v, err := wire.DecodeAMQPValue(req.Body)
		if err != nil {
			return c.errorResponse(broker.Errorf(broker.CodeInvalid, "the put-token body is not an amqp-value: %v", err), cbsAddress)
		}
		token, _ = v.(string)
	}
	if token == "" {
		return c.errorResponse(broker.Errorf(broker.CodeUnauthorized, "the put-token request carries no token (want an amqp-value string)"), cbsAddress)
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
		c.log.Info("put-token refused", "audience", name, "err", err)
		return c.errorResponse(err, cbsAddress)
	}
	if strings.Contains(name, "://") && !sas.Covers(g.Audience, name) {
		return c.errorResponse(sas.NotCovered(g.Audience, name), cbsAddress)
	}
	if err := c.grants.add(g, c.clock.Now()); err != nil {
		return c.errorResponse(err, cbsAddress)
	}
	c.tokensChanged()
	c.log.Debug("token accepted", "audience", g.Audience, "expires", g.Expires)
	return &response{status: http.StatusAccepted, desc: "Accepted"}
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
	id, err := c.opts.EntraID.Validate(token, []string{host, openHost}, putTokenExpiry(req.ApplicationProperties["expiration"]))
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
