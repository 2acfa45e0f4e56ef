package amqpserver

import (
	"net/http"
	"strings"

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
	g, err := c.opts.Authorizer.Validate(typ, token)
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
