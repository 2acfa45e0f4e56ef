package sshserver

import (
	"context"
	"log/slog"

	"github.com/peeklock/peeklock/broker"
)

var _ broker.ClientCloser = (*sessionClient)(nil)

// CloseClient closes an application's connection through the shared
// client and writes an audit line, whatever the outcome. A read-only
// session's shared client refuses it.
func (c *sessionClient) CloseClient(ctx context.Context, id, reason string) error {
	if !c.enter() {
		return errSessionEnded
	}
	defer c.leave()
	cl, ok := broker.ClientCloserOf(c.inner)
	var err error
	if ok {
		err = cl.CloseClient(ctx, id, reason)
	} else {
		err = &broker.Error{Code: broker.CodeNotSupported, Message: "this endpoint cannot close its clients' connections"}
	}
	c.record("close-connection", "", 0, "", err, slog.String("connection", id), slog.String("reason", reason))
	return err
}
