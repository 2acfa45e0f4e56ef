package broker

import (
	"errors"
	"fmt"
)

// Code classifies a broker error. Listeners map each code to one AMQP error
// condition; clients map conditions back (one table each way).
type Code uint8

// Error codes.
const (
	CodeUnknown           Code = iota
	CodeLockLost               // the message lock expired, was lost, or the token is unknown
	CodeSessionLockLost        // the session lock expired or was lost
	CodeSessionCannotLock      // the session is locked by another receiver, or no session is free
	CodeNotFound               // the entity does not exist
	CodeMessageNotFound        // no message with that sequence number (receive deferred, cancel)
	CodeAlreadyExists          // an entity with that path exists already
	CodeQuotaExceeded          // the entity is full (MaxSizeInMegabytes)
	CodeMessageTooLarge        // the message exceeds MaxMessageSizeInKilobytes
	CodeUnauthorized           // the credential does not allow the operation
	CodeInvalid                // a bad argument or configuration
	CodeNotSupported           // the endpoint cannot do this
	CodeServerBusy             // try again later
	CodeTimeout                // the operation did not finish in time
	CodeClosed                 // the client or broker was closed
	CodeConnectionLost         // the connection to the endpoint dropped
	CodeReadOnly               // refused because the dashboard or session is read-only
	CodeEntityDisabled         // the entity's status refuses the operation (Disabled, SendDisabled, ReceiveDisabled)
)

var codeNames = [...]string{
	CodeUnknown:           "error",
	CodeLockLost:          "lock lost",
	CodeSessionLockLost:   "session lock lost",
	CodeSessionCannotLock: "session cannot be locked",
	CodeNotFound:          "entity not found",
	CodeMessageNotFound:   "message not found",
	CodeAlreadyExists:     "entity already exists",
	CodeQuotaExceeded:     "quota exceeded",
	CodeMessageTooLarge:   "message too large",
	CodeUnauthorized:      "unauthorized",
	CodeInvalid:           "invalid request",
	CodeNotSupported:      "not supported",
	CodeServerBusy:        "server busy",
	CodeTimeout:           "timeout",
	CodeClosed:            "closed",
	CodeConnectionLost:    "connection lost",
	CodeReadOnly:          "read-only",
	CodeEntityDisabled:    "entity disabled",
}

// String returns the code's short name.
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return codeNames[CodeUnknown]
}

// Retryable reports whether an operation that failed with this code may
// succeed when retried unchanged (after a wait).
func (c Code) Retryable() bool {
	switch c {
	case CodeQuotaExceeded, CodeServerBusy, CodeTimeout, CodeConnectionLost, CodeSessionCannotLock:
		return true
	}
	return false
}

// Error is the error every broker operation returns. Compare with errors.Is
// against the sentinel values below (which compare by Code) or read the
// fields with errors.As.
type Error struct {
	Code Code
	// Message is the human-readable text.
	Message string
	// TrackingID identifies the failure in the broker's log, as Service Bus
	// does; empty where the endpoint gives none.
	TrackingID string
	// Entity is the entity path the operation addressed, if any.
	Entity string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns "<code>: <message> (entity X) (TrackingId: Y)".
func (e *Error) Error() string {
	s := e.Code.String()
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Entity != "" {
		s += fmt.Sprintf(" (entity %q)", e.Entity)
	}
	if e.TrackingID != "" {
		s += " (TrackingId: " + e.TrackingID + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code; the sentinels
// carry only a code, so errors.Is(err, ErrLockLost) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Retryable reports whether retrying may help.
func (e *Error) Retryable() bool { return e.Code.Retryable() }

// Sentinel errors for errors.Is.
var (
	// ErrLockLost: the lock expired, was lost (settings changed, connection
	// dropped), was already settled, or never existed.
	ErrLockLost = &Error{Code: CodeLockLost}
	// ErrSessionLockLost: the session lock expired or was lost.
	ErrSessionLockLost = &Error{Code: CodeSessionLockLost}
	// ErrSessionCannotLock: the session is held by another receiver.
	ErrSessionCannotLock = &Error{Code: CodeSessionCannotLock}
	// ErrNotFound: the entity does not exist.
	ErrNotFound = &Error{Code: CodeNotFound}
	// ErrMessageNotFound: no message with the given sequence number.
	ErrMessageNotFound = &Error{Code: CodeMessageNotFound}
	// ErrAlreadyExists: the entity exists already.
	ErrAlreadyExists = &Error{Code: CodeAlreadyExists}
	// ErrQuotaExceeded: the entity is full; retry after receivers drain it.
	ErrQuotaExceeded = &Error{Code: CodeQuotaExceeded}
	// ErrMessageTooLarge: the message exceeds the entity's maximum size.
	ErrMessageTooLarge = &Error{Code: CodeMessageTooLarge}
	// ErrUnauthorized: the credential does not allow the operation.
	ErrUnauthorized = &Error{Code: CodeUnauthorized}
	// ErrInvalid: a bad argument or configuration.
	ErrInvalid = &Error{Code: CodeInvalid}
	// ErrNotSupported: the endpoint cannot do this.
	ErrNotSupported = &Error{Code: CodeNotSupported}
	// ErrServerBusy: the endpoint is overloaded; retry later.
	ErrServerBusy = &Error{Code: CodeServerBusy}
	// ErrTimeout: the operation did not finish in time.
	ErrTimeout = &Error{Code: CodeTimeout}
	// ErrClosed: the client or broker is closed.
	ErrClosed = &Error{Code: CodeClosed}
	// ErrConnectionLost: the connection dropped; locks it held are lost.
	ErrConnectionLost = &Error{Code: CodeConnectionLost}
	// ErrReadOnly: refused because the dashboard or session is read-only.
	ErrReadOnly = &Error{Code: CodeReadOnly}
	// ErrEntityDisabled: the entity's status does not allow the operation
	// (sending to a Disabled or SendDisabled entity, receiving from a
	// Disabled or ReceiveDisabled one).
	ErrEntityDisabled = &Error{Code: CodeEntityDisabled}
)

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of err, or CodeUnknown when err is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeUnknown
}

// TrackingIDOf returns the tracking id carried by err, if any.
func TrackingIDOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.TrackingID
	}
	return ""
}
