package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/remote"
)

// The runbook commands read what peeklock serve answers beside the Service
// Bus API (GET /$peeklock/..., broker/amqpserver/admin/peeklock.go) through
// the admin API of serve's connection string: a message's history, and the
// counts with every receiver's locks.

// remoteOf returns the remote client under c's wrappers (read-only), if c
// is one.
func remoteOf(c broker.Client) (*remote.Client, bool) {
	for range 8 {
		if rc, ok := c.(*remote.Client); ok {
			return rc, true
		}
		u, ok := c.(broker.Unwrapper)
		if !ok {
			return nil, false
		}
		c = u.Unwrap()
	}
	return nil, false
}

// serveHistory reads the history of message seq of entity from the
// peeklock serve behind c. ok is false when c is no remote endpoint.
func serveHistory(ctx context.Context, c broker.Client, entity string, seq int64) (h broker.History, ok bool, err error) {
	rc, ok := remoteOf(c)
	if !ok {
		return h, false, nil
	}
	body, err := rc.AdminGet(ctx, "$peeklock/history", url.Values{"entity": {entity}, "seq": {strconv.FormatInt(seq, 10)}})
	if err == nil {
		err = json.Unmarshal(body, &h)
	}
	return h, true, err
}

// serveEntities returns the entities of the peeklock serve behind c with
// the engine's counts (every receiver's locks in Locked, not in Active);
// ok is false when c is not a peeklock serve (Service Bus knows no locks).
func serveEntities(ctx context.Context, c broker.Client) (list []broker.Entity, ok bool) {
	rc, isRemote := remoteOf(c)
	if !isRemote {
		return nil, false
	}
	body, err := rc.AdminGet(ctx, "$peeklock/entities", nil)
	if err != nil || json.Unmarshal(body, &list) != nil {
		return nil, false
	}
	return list, true
}

// notServe words a failed /$peeklock read of an endpoint that is not
// peeklock serve.
func notServe(err error, what string) error {
	var be *broker.Error
	if errors.As(err, &be) && (be.Code == broker.CodeNotFound || be.Code == broker.CodeNotSupported) {
		return fmt.Errorf("%w (only peeklock serve and the embedded broker keep %s; Service Bus keeps none)", err, what)
	}
	return err
}
