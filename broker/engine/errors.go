package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
)

// newErr builds a *broker.Error with a fresh tracking id, as Service Bus
// gives every failure one.
func newErr(code broker.Code, entity string, format string, args ...any) *broker.Error {
	return &broker.Error{
		Code:       code,
		Message:    fmt.Sprintf(format, args...),
		TrackingID: uuid.NewString(),
		Entity:     entity,
	}
}

func errClosed() error {
	return newErr(broker.CodeClosed, "", "the embedded broker is closed")
}

func errNotFound(path string) error {
	return newErr(broker.CodeNotFound, path, "%s", broker.NotFoundMessage(path))
}

// lockLostText is what Service Bus says of a lock that is not held (the
// Go SDK's TestReceiver_RenewMessageLock checks it).
const lockLostText = "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue, or was received by a different receiver instance."

// sessionLockLostText is what Service Bus says when the session lock a
// message was received under is gone.
const sessionLockLostText = "The session lock has expired on the MessageSession. Accept a new MessageSession."

// errLockLost is the answer to a settlement or renewal whose lock is not
// held: Service Bus's words, then which lock and where.
func errLockLost(path string, sub broker.SubQueue, token broker.LockToken) error {
	where := "entity"
	if sub != broker.SubQueueMain {
		where = sub.String()
	}
	return newErr(broker.CodeLockLost, path,
		"%s The lock %s is not held on this %s: it expired, was lost, was already settled, or never existed.", lockLostText, token, where)
}

// errDisabled is the answer to an operation (op: "Send" or "Receive") that
// the entity's status refuses, worded as Service Bus words it.
func errDisabled(path string, status broker.EntityStatus, op string) error {
	if status == broker.StatusDisabled {
		return newErr(broker.CodeEntityDisabled, path, "Messaging entity '%s' is currently disabled", path)
	}
	return newErr(broker.CodeEntityDisabled, path, "Messaging entity '%s' is currently disabled for %s operations (its status is %s)", path, op, status)
}

func errSessionLockLost(path, session string) error {
	return newErr(broker.CodeSessionLockLost, path,
		"the session lock of session %q is not held by this receiver: it expired, was lost or released, or was never taken", session)
}

// storeErr wraps a store failure.
func storeErr(what, path string, err error) error {
	var be *broker.Error
	if errors.As(err, &be) && be.TrackingID != "" {
		return err
	}
	code := broker.CodeUnknown
	if be != nil {
		code = be.Code
	}
	e := newErr(code, path, "%s: %v", what, err)
	e.Err = err
	return e
}

// ctxErr turns a context error into a broker error that still matches
// context.Canceled / context.DeadlineExceeded with errors.Is.
func ctxErr(err error) error {
	code := broker.CodeUnknown
	msg := "the operation was cancelled"
	if errors.Is(err, context.DeadlineExceeded) {
		code, msg = broker.CodeTimeout, "the operation did not finish before its deadline"
	}
	e := newErr(code, "", "%s", msg)
	e.Err = err
	return e
}
