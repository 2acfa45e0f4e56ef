package amqpserver

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// scope says what a protocol error ends: the link, the session or the
// whole connection.
type scope uint8

const (
	scopeLink scope = iota
	scopeSession
	scopeConn
)

// protocolError is a violation by the peer, answered with a detach, end or
// close that carries the condition.
type protocolError struct {
	scope scope
	cond  wire.Symbol
	desc  string
}

func (e *protocolError) Error() string { return string(e.cond) + ": " + e.desc }

func (e *protocolError) wireError() *wire.Error {
	return &wire.Error{Condition: e.cond, Description: e.desc}
}

func connError(cond wire.Symbol, format string, args ...any) error {
	return &protocolError{scope: scopeConn, cond: cond, desc: fmt.Sprintf(format, args...)}
}

func sessionError(cond wire.Symbol, format string, args ...any) error {
	return &protocolError{scope: scopeSession, cond: cond, desc: fmt.Sprintf(format, args...)}
}

func linkError(cond wire.Symbol, format string, args ...any) error {
	return &protocolError{scope: scopeLink, cond: cond, desc: fmt.Sprintf(format, args...)}
}

// errPeerClosed ends the read loop after the peer's close was answered.
var errPeerClosed = errors.New("peer closed the connection")

// errHandshake ends a connection whose protocol header or SASL exchange
// failed; the peer was told in the header or SASL outcome.
var errHandshake = errors.New("handshake failed")

// closeErrorFor returns the error a close frame should carry after the read
// loop ended with err, and whether a close frame should be sent at all.
func closeErrorFor(err error) (*wire.Error, bool) {
	var pe *protocolError
	var fse *wire.FrameSizeError
	var de *wire.DecodeError
	switch {
	case err == nil, errors.Is(err, errPeerClosed), errors.Is(err, errHandshake):
		return nil, false
	case errors.As(err, &pe):
		return pe.wireError(), true
	case errors.As(err, &fse):
		return &wire.Error{Condition: wire.CondFramingError, Description: fse.Error()}, true
	case errors.As(err, &de):
		if de.Offset < wire.FrameHeaderSize {
			return &wire.Error{Condition: wire.CondFramingError, Description: de.Error()}, true
		}
		return &wire.Error{Condition: wire.CondDecodeError, Description: de.Error()}, true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return nil, false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return nil, false
	}
	return &wire.Error{Condition: wire.CondInternalError, Description: err.Error()}, true
}
