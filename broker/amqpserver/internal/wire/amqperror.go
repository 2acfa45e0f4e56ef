package wire

// Error conditions of AMQP 1.0 (§2.8.15-2.8.18) and of Service Bus
// (spec/amqp-dialect.md) that a listener sends.
const (
	CondInternalError         Symbol = "amqp:internal-error"
	CondNotFound              Symbol = "amqp:not-found"
	CondUnauthorizedAccess    Symbol = "amqp:unauthorized-access"
	CondDecodeError           Symbol = "amqp:decode-error"
	CondResourceLimitExceeded Symbol = "amqp:resource-limit-exceeded"
	CondNotAllowed            Symbol = "amqp:not-allowed"
	CondInvalidField          Symbol = "amqp:invalid-field"
	CondNotImplemented        Symbol = "amqp:not-implemented"
	CondResourceLocked        Symbol = "amqp:resource-locked"
	CondPreconditionFailed    Symbol = "amqp:precondition-failed"
	CondResourceDeleted       Symbol = "amqp:resource-deleted"
	CondIllegalState          Symbol = "amqp:illegal-state"
	CondFrameSizeTooSmall     Symbol = "amqp:frame-size-too-small"

	CondConnectionForced   Symbol = "amqp:connection:forced"
	CondFramingError       Symbol = "amqp:connection:framing-error"
	CondConnectionRedirect Symbol = "amqp:connection:redirect"

	CondWindowViolation  Symbol = "amqp:session:window-violation"
	CondErrantLink       Symbol = "amqp:session:errant-link"
	CondHandleInUse      Symbol = "amqp:session:handle-in-use"
	CondUnattachedHandle Symbol = "amqp:session:unattached-handle"

	CondDetachForced          Symbol = "amqp:link:detach-forced"
	CondTransferLimitExceeded Symbol = "amqp:link:transfer-limit-exceeded"
	CondMessageSizeExceeded   Symbol = "amqp:link:message-size-exceeded"
	CondLinkRedirect          Symbol = "amqp:link:redirect"
	CondStolen                Symbol = "amqp:link:stolen"

	CondDeadLetter          Symbol = "com.microsoft:dead-letter"
	CondMessageLockLost     Symbol = "com.microsoft:message-lock-lost"
	CondSessionLockLost     Symbol = "com.microsoft:session-lock-lost"
	CondSessionCannotBeLock Symbol = "com.microsoft:session-cannot-be-locked"
	CondServerBusy          Symbol = "com.microsoft:server-busy"
	CondTimeout             Symbol = "com.microsoft:timeout"
	CondEntityAlreadyExists Symbol = "com.microsoft:entity-already-exists"
	CondMessageNotFound     Symbol = "com.microsoft:message-not-found"
	CondEntityDisabled      Symbol = "com.microsoft:entity-disabled"
)

// Error is the AMQP error composite (§2.8.14) carried by detach, end,
// close and the rejected outcome.
type Error struct {
	// Condition is the mandatory error condition symbol.
	Condition Symbol
	// Description is the human-readable text.
	Description string
	// Info holds extra details; nil when absent.
	Info Map
}

// Error returns "condition: description".
func (e *Error) Error() string {
	if e.Description == "" {
		return string(e.Condition)
	}
	return string(e.Condition) + ": " + e.Description
}

func (e *Error) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descError)
	b = c.symbol(b, e.Condition, true)
	b = c.str(b, e.Description, e.Description != "")
	b, err := c.fields(b, e.Info)
	if err != nil {
		return b[:start], err
	}
	return c.end(b), nil
}

// appendErrorField writes an optional error field of a composite.
func (c *compositeWriter) errorField(b []byte, e *Error) ([]byte, error) {
	if e == nil {
		return c.null(b), nil
	}
	b, err := e.appendTo(b)
	if err != nil {
		return b, err
	}
	return c.done(b), nil
}

// ReadError reads an error composite.
func (d *Decoder) ReadError() (*Error, error) {
	f, err := d.readComposite(descError)
	if err != nil {
		return nil, err
	}
	e := new(Error)
	f.required(field(&f, &e.Condition, (*Decoder).ReadSymbol), "condition")
	field(&f, &e.Description, (*Decoder).ReadString)
	field(&f, &e.Info, (*Decoder).ReadMap)
	if err := f.finish(); err != nil {
		return nil, err
	}
	return e, nil
}
