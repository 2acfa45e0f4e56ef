package remote

import (
	"context"
	"net/url"

	"github.com/peeklock/peeklock/broker"
)

// AdminGet fetches path (no leading slash) with query from the endpoint's
// admin API, authorised, addressed and failing as every admin request of
// the client (a 404 is CodeNotFound): for reads beside the Service Bus API,
// such as peeklock serve's /$peeklock/history. Endpoints without the admin
// API (generic AMQP 1.0) fail with CodeNotSupported.
func (c *Client) AdminGet(ctx context.Context, path string, query url.Values) ([]byte, error) {
	if c.admin == nil {
		return nil, &broker.Error{Code: broker.CodeNotSupported, Message: "this endpoint has no Service Bus admin API (generic AMQP 1.0)"}
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	body, aerr := c.admin.get(ctx, path, query)
	if aerr != nil {
		return nil, aerr.err
	}
	return body, nil
}
