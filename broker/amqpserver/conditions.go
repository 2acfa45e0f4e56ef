package amqpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// wireCondition is how one broker.Code travels: the AMQP error condition of
// outcomes, detaches and attach refusals, and the status code of management
// responses.
type wireCondition struct {
	cond   wire.Symbol
	status int32
}

// conditionOf returns how err travels, by the one table of package sbamqp
// (sbamqp.WireOf). Context errors are timeouts: the operation did not
// finish in the time the request allowed.
func conditionOf(err error) wireCondition {
	code := broker.CodeOf(err)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		code = broker.CodeTimeout
	}
	w := sbamqp.WireOf(code)
	return wireCondition{cond: wire.Symbol(w.Condition), status: int32(w.Status)}
}

// newTrackingID returns a tracking id in the form Service Bus uses.
func newTrackingID() string { return uuid.NewString() + "_G0" }

// describe returns the description of err as clients see it: the message
// with a tracking id (the error's own, or a new one), the address and a
// timestamp, as Service Bus writes them.
func describe(err error, address string, now time.Time) string {
	id := broker.TrackingIDOf(err)
	if id == "" {
		id = newTrackingID()
	}
	msg := err.Error()
	var be *broker.Error
	if errors.As(err, &be) {
		msg = be.Code.String()
		if be.Message != "" {
			msg = be.Message
		}
	}
	return withTracking(msg, id, address, now)
}

// withTracking appends to msg the tracking id, address and timestamp
// that end every Service Bus error description.
func withTracking(msg, trackingID, address string, now time.Time) string {
	return fmt.Sprintf("%s TrackingId:%s, SystemTracker:%s, Timestamp:%s", msg, trackingID, address, now.UTC().Format("2006-01-02T15:04:05"))
}

// amqpError returns err as an AMQP error for an outcome, a detach or an
// end.
func amqpError(err error, address string, now time.Time) *wire.Error {
	return &wire.Error{Condition: conditionOf(err).cond, Description: describe(err, address, now)}
}
