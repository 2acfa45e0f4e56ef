package sbamqp

import (
	"net/http"

	"github.com/peeklock/peeklock/broker"
)

// Error conditions of AMQP 1.0 (§2.8.15-2.8.18).
const (
	CondInternalError         = "amqp:internal-error"
	CondNotFound              = "amqp:not-found"
	CondUnauthorizedAccess    = "amqp:unauthorized-access"
	CondDecodeError           = "amqp:decode-error"
	CondResourceLimitExceeded = "amqp:resource-limit-exceeded"
	CondNotAllowed            = "amqp:not-allowed"
	CondInvalidField          = "amqp:invalid-field"
	CondNotImplemented        = "amqp:not-implemented"
	CondResourceLocked        = "amqp:resource-locked"
	CondPreconditionFailed    = "amqp:precondition-failed"
	CondResourceDeleted       = "amqp:resource-deleted"
	CondIllegalState          = "amqp:illegal-state"
	CondFrameSizeTooSmall     = "amqp:frame-size-too-small"

	CondConnectionForced   = "amqp:connection:forced"
	CondFramingError       = "amqp:connection:framing-error"
	CondConnectionRedirect = "amqp:connection:redirect"

	CondWindowViolation  = "amqp:session:window-violation"
	CondErrantLink       = "amqp:session:errant-link"
	CondHandleInUse      = "amqp:session:handle-in-use"
	CondUnattachedHandle = "amqp:session:unattached-handle"

	CondDetachForced          = "amqp:link:detach-forced"
	CondTransferLimitExceeded = "amqp:link:transfer-limit-exceeded"
	CondMessageSizeExceeded   = "amqp:link:message-size-exceeded"
	CondLinkRedirect          = "amqp:link:redirect"
	CondStolen                = "amqp:link:stolen"
)

// Error conditions of Service Bus that the listener sends.
const (
	CondDeadLetter          = "com.microsoft:dead-letter"
	CondMessageLockLost     = "com.microsoft:message-lock-lost"
	CondSessionLockLost     = "com.microsoft:session-lock-lost"
	CondSessionCannotBeLock = "com.microsoft:session-cannot-be-locked"
	CondServerBusy          = "com.microsoft:server-busy"
	CondTimeout             = "com.microsoft:timeout"
	CondEntityAlreadyExists = "com.microsoft:entity-already-exists"
	CondMessageNotFound     = "com.microsoft:message-not-found"
	CondEntityDisabled      = "com.microsoft:entity-disabled"
)

// Error conditions that Service Bus sends besides and the client
// understands.
const (
	CondOperationCancelled = "com.microsoft:operation-cancelled"
	CondArgumentError      = "com.microsoft:argument-error"
	CondArgumentOutOfRange = "com.microsoft:argument-out-of-range"
	CondPublisherRevoked   = "com.microsoft:publisher-revoked"
	CondStoreLockLost      = "com.microsoft:store-lock-lost"
)

// Wire is how one broker.Code travels: the AMQP error condition of
// outcomes, detaches, ends and attach refusals, and the status code of
// management responses.
type Wire struct {
	Condition string
	Status    int
}

// toWire is the listener's table from broker codes to the wire. Codes
// missing here travel as Internal. CodeReadOnly has no condition of its
// own in Service Bus: it travels as unauthorized access.
var toWire = map[broker.Code]Wire{
	broker.CodeLockLost:          {CondMessageLockLost, http.StatusGone},
	broker.CodeSessionLockLost:   {CondSessionLockLost, http.StatusGone},
	broker.CodeSessionCannotLock: {CondSessionCannotBeLock, http.StatusConflict},
	broker.CodeNotFound:          {CondNotFound, http.StatusNotFound},
	broker.CodeMessageNotFound:   {CondMessageNotFound, http.StatusNotFound},
	broker.CodeAlreadyExists:     {CondEntityAlreadyExists, http.StatusConflict},
	broker.CodeQuotaExceeded:     {CondResourceLimitExceeded, http.StatusForbidden},
	broker.CodeMessageTooLarge:   {CondMessageSizeExceeded, http.StatusRequestEntityTooLarge},
	broker.CodeUnauthorized:      {CondUnauthorizedAccess, http.StatusUnauthorized},
	broker.CodeServerBusy:        {CondServerBusy, http.StatusServiceUnavailable},
	broker.CodeTimeout:           {CondTimeout, http.StatusRequestTimeout},
	broker.CodeInvalid:           {CondInvalidField, http.StatusBadRequest},
	broker.CodeNotSupported:      {CondNotImplemented, http.StatusNotImplemented},
	broker.CodeReadOnly:          {CondUnauthorizedAccess, http.StatusUnauthorized},
	broker.CodeEntityDisabled:    {CondEntityDisabled, http.StatusForbidden},
}

// Internal is how an error of no known code travels.
var Internal = Wire{CondInternalError, http.StatusInternalServerError}

// WireOf returns how an error of code travels from the listener: its
// condition and management status (Internal for a code with none).
func WireOf(code broker.Code) Wire {
	if w, ok := toWire[code]; ok {
		return w
	}
	return Internal
}

// fromCondition is the client's table from AMQP error conditions (of
// outcomes, detaches, ends, closes and management responses) to broker
// codes. It holds every condition the listener sends (toWire) and those
// Service Bus sends besides.
var fromCondition = map[string]broker.Code{
	CondMessageLockLost:       broker.CodeLockLost,
	CondSessionLockLost:       broker.CodeSessionLockLost,
	CondSessionCannotBeLock:   broker.CodeSessionCannotLock,
	CondMessageNotFound:       broker.CodeMessageNotFound,
	CondEntityAlreadyExists:   broker.CodeAlreadyExists,
	CondServerBusy:            broker.CodeServerBusy,
	CondTimeout:               broker.CodeTimeout,
	CondOperationCancelled:    broker.CodeTimeout,
	CondArgumentError:         broker.CodeInvalid,
	CondArgumentOutOfRange:    broker.CodeInvalid,
	CondEntityDisabled:        broker.CodeEntityDisabled,
	CondPublisherRevoked:      broker.CodeUnauthorized,
	CondStoreLockLost:         broker.CodeServerBusy,
	CondNotFound:              broker.CodeNotFound,
	CondResourceDeleted:       broker.CodeNotFound,
	CondResourceLimitExceeded: broker.CodeQuotaExceeded,
	CondMessageSizeExceeded:   broker.CodeMessageTooLarge,
	CondUnauthorizedAccess:    broker.CodeUnauthorized,
	CondInvalidField:          broker.CodeInvalid,
	CondDecodeError:           broker.CodeInvalid,
	CondPreconditionFailed:    broker.CodeInvalid,
	CondNotAllowed:            broker.CodeInvalid,
	CondNotImplemented:        broker.CodeNotSupported,
	CondConnectionForced:      broker.CodeConnectionLost,
	CondDetachForced:          broker.CodeConnectionLost,
	CondInternalError:         broker.CodeUnknown,
}

// CodeOfCondition returns the broker code of an AMQP error condition; known
// is false (and the code CodeUnknown) for a condition not in the table.
func CodeOfCondition(cond string) (code broker.Code, known bool) {
	code, known = fromCondition[cond]
	return code, known
}

// fromStatus maps the status code of a management response that carries no
// error condition. Conditions, where present, win.
var fromStatus = map[int]broker.Code{
	http.StatusBadRequest:            broker.CodeInvalid,
	http.StatusUnauthorized:          broker.CodeUnauthorized,
	http.StatusForbidden:             broker.CodeQuotaExceeded,
	http.StatusNotFound:              broker.CodeNotFound,
	http.StatusRequestTimeout:        broker.CodeTimeout,
	http.StatusConflict:              broker.CodeSessionCannotLock,
	http.StatusGone:                  broker.CodeLockLost,
	http.StatusRequestEntityTooLarge: broker.CodeMessageTooLarge,
	http.StatusNotImplemented:        broker.CodeNotSupported,
	http.StatusServiceUnavailable:    broker.CodeServerBusy,
}

// CodeOfStatus returns the broker code of a management response's status
// code when the response names no condition; known is false for a status
// not in the table.
func CodeOfStatus(status int) (code broker.Code, known bool) {
	code, known = fromStatus[status]
	return code, known
}
