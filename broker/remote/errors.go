package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// trackingRE finds the tracking id in a Service Bus error description:
// "... TrackingId:3f2c..._G12, SystemTracker:..., Timestamp:...".
var trackingRE = regexp.MustCompile(`(?i)[\s,]*TrackingId:\s*([^,\s]+)`)

// splitDescription separates the tracking id from a Service Bus error
// description and drops the SystemTracker and Timestamp that follow it.
func splitDescription(desc string) (text, trackingID string) {
	loc := trackingRE.FindStringSubmatchIndex(desc)
	if loc == nil {
		return strings.TrimSpace(desc), ""
	}
	return strings.TrimSpace(desc[:loc[0]]), desc[loc[2]:loc[3]]
}

// fromCondition builds the broker error of an AMQP error condition and
// description.
func fromCondition(cond amqp.ErrCond, desc, entity string, cause error) *broker.Error {
	code, known := sbamqp.CodeOfCondition(string(cond))
	text, id := splitDescription(desc)
	if text == "" {
		text = string(cond)
	} else if !known {
		text = string(cond) + ": " + text
	}
	return &broker.Error{Code: code, Message: text, TrackingID: id, Entity: entity, Err: cause}
}

// mapErr turns any error of go-amqp, the network or a context into a
// *broker.Error for an operation (op, e.g. "complete") on entity. A
// *broker.Error passes through unchanged.
func mapErr(err error, op, entity string) error {
	if err == nil {
		return nil
	}
	var be *broker.Error
	if errors.As(err, &be) {
		return err
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Condition != "" {
		e := fromCondition(ae.Condition, ae.Description, entity, err)
		var ce *amqp.ConnError
		if errors.As(err, &ce) {
			// Whatever the endpoint said when it closed the connection, the
			// operation failed because the connection is gone.
			e.Code = broker.CodeConnectionLost
			e.Message = "the endpoint closed the connection: " + e.Message
		}
		return e
	}
	var (
		ce *amqp.ConnError
		se *amqp.SessionError
		le *amqp.LinkError
		ne net.Error
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &broker.Error{Code: broker.CodeTimeout, Message: op + " did not finish in time", Entity: entity, Err: err}
	case errors.Is(err, context.Canceled):
		return &broker.Error{Code: broker.CodeTimeout, Message: op + " was cancelled", Entity: entity, Err: err}
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return &broker.Error{Code: broker.CodeConnectionLost, Message: op + ": the connection dropped: " + err.Error(), Entity: entity, Err: err}
	case errors.As(err, &se), errors.As(err, &le):
		return &broker.Error{Code: broker.CodeConnectionLost, Message: op + ": the link closed: " + err.Error(), Entity: entity, Err: err}
	}
	return &broker.Error{Code: broker.CodeUnknown, Message: op + ": " + err.Error(), Entity: entity, Err: err}
}

// statusError builds the error of a management response with a non-2xx
// status.
func statusError(status int, cond, desc, op, entity string) *broker.Error {
	if cond != "" {
		if _, ok := sbamqp.CodeOfCondition(cond); ok {
			e := fromCondition(amqp.ErrCond(cond), desc, entity, nil)
			return e
		}
	}
	code, ok := sbamqp.CodeOfStatus(status)
	text, id := splitDescription(desc)
	if text == "" {
		text = fmt.Sprintf("%s failed with status %d", op, status)
	} else if !ok {
		text = fmt.Sprintf("%s failed with status %d: %s", op, status, text)
	}
	return &broker.Error{Code: code, Message: text, TrackingID: id, Entity: entity}
}

// lockLost is the error of settling or renewing a lock that is gone.
func lockLost(entity, why string) *broker.Error {
	return &broker.Error{Code: broker.CodeLockLost, Message: why, Entity: entity}
}

// notSupported is the error of an operation the endpoint cannot do.
func notSupported(why string) *broker.Error {
	return &broker.Error{Code: broker.CodeNotSupported, Message: why}
}
