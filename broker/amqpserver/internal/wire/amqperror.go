package wire

import "github.com/peeklock/peeklock/broker/sbamqp"

// Error conditions of AMQP 1.0 (§2.8.15-2.8.18) and of Service Bus that a
// listener sends, as symbols; the names are package sbamqp's.
const (
	CondInternalError         Symbol = sbamqp.CondInternalError
	CondNotFound              Symbol = sbamqp.CondNotFound
	CondUnauthorizedAccess    Symbol = sbamqp.CondUnauthorizedAccess
	CondDecodeError           Symbol = sbamqp.CondDecodeError
	CondResourceLimitExceeded Symbol = sbamqp.CondResourceLimitExceeded
	CondNotAllowed            Symbol = sbamqp.CondNotAllowed
	CondInvalidField          Symbol = sbamqp.CondInvalidField
	CondNotImplemented        Symbol = sbamqp.CondNotImplemented
	CondResourceLocked        Symbol = sbamqp.CondResourceLocked
	CondPreconditionFailed    Symbol = sbamqp.CondPreconditionFailed
	CondResourceDeleted       Symbol = sbamqp.CondResourceDeleted
	CondIllegalState          Symbol = sbamqp.CondIllegalState
	CondFrameSizeTooSmall     Symbol = sbamqp.CondFrameSizeTooSmall

	CondConnectionForced   Symbol = sbamqp.CondConnectionForced
	CondFramingError       Symbol = sbamqp.CondFramingError
	CondConnectionRedirect Symbol = sbamqp.CondConnectionRedirect

	CondWindowViolation  Symbol = sbamqp.CondWindowViolation
	CondErrantLink       Symbol = sbamqp.CondErrantLink
	CondHandleInUse      Symbol = sbamqp.CondHandleInUse
	CondUnattachedHandle Symbol = sbamqp.CondUnattachedHandle

	CondDetachForced          Symbol = sbamqp.CondDetachForced
	CondTransferLimitExceeded Symbol = sbamqp.CondTransferLimitExceeded
	CondMessageSizeExceeded   Symbol = sbamqp.CondMessageSizeExceeded
	CondLinkRedirect          Symbol = sbamqp.CondLinkRedirect
	CondStolen                Symbol = sbamqp.CondStolen

	CondDeadLetter          Symbol = sbamqp.CondDeadLetter
	CondMessageLockLost     Symbol = sbamqp.CondMessageLockLost
	CondSessionLockLost     Symbol = sbamqp.CondSessionLockLost
	CondSessionCannotBeLock Symbol = sbamqp.CondSessionCannotBeLock
	CondServerBusy          Symbol = sbamqp.CondServerBusy
	CondTimeout             Symbol = sbamqp.CondTimeout
	CondEntityAlreadyExists Symbol = sbamqp.CondEntityAlreadyExists
	CondMessageNotFound     Symbol = sbamqp.CondMessageNotFound
	CondEntityDisabled      Symbol = sbamqp.CondEntityDisabled
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
