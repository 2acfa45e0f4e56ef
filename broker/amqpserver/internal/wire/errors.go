package wire

import (
	"errors"
	"strconv"
)

// ErrDecode is matched (errors.Is) by every error that reports corrupt or
// unsupported input.
var ErrDecode = errors.New("amqp decode error")

// ErrEncode is matched (errors.Is) by every error that reports a value this
// package cannot encode.
var ErrEncode = errors.New("amqp encode error")

// ErrFrameTooLarge is matched (errors.Is) by the error a FrameReader returns
// for a frame larger than its maximum frame size.
var ErrFrameTooLarge = errors.New("amqp frame too large")

// DecodeError reports corrupt or unsupported input. A listener answers it
// with the AMQP condition amqp:decode-error (or amqp:connection:framing-error
// for frame-level faults).
type DecodeError struct {
	// Offset is the byte offset in the decoded buffer where decoding failed.
	Offset int
	// Msg says what was wrong.
	Msg string
}

// Error returns "amqp decode error at offset N: msg".
func (e *DecodeError) Error() string {
	return "amqp decode error at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Is makes errors.Is(err, ErrDecode) true.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// EncodeError reports a value that cannot be encoded.
type EncodeError struct {
	// Msg says what was wrong.
	Msg string
}

// Error returns "amqp encode error: msg".
func (e *EncodeError) Error() string { return "amqp encode error: " + e.Msg }

// Is makes errors.Is(err, ErrEncode) true.
func (e *EncodeError) Is(target error) bool { return target == ErrEncode }

// FrameSizeError reports a frame header whose size exceeds the negotiated
// maximum (amqp:connection:framing-error).
type FrameSizeError struct {
	// Size is the frame size the header announced.
	Size uint32
	// Max is the largest frame size the reader accepts.
	Max uint32
}

// Error returns "amqp frame of N bytes exceeds the maximum frame size M".
func (e *FrameSizeError) Error() string {
	return "amqp frame of " + strconv.FormatUint(uint64(e.Size), 10) +
		" bytes exceeds the maximum frame size " + strconv.FormatUint(uint64(e.Max), 10)
}

// Is makes errors.Is(err, ErrFrameTooLarge) and errors.Is(err, ErrDecode)
// true.
func (e *FrameSizeError) Is(target error) bool {
	return target == ErrFrameTooLarge || target == ErrDecode
}
