package wire

import (
	"fmt"
	"slices"
)

// TransferHeadBound is more than the frame header and transfer fields of a
// frame take but for a rare big delivery tag or state: a payload with this
// much room left in a frame is encoded as one frame at once, without
// measuring its head first.
const TransferHeadBound = 256

// AppendTransferFrames appends the delivery t as transfer frames on
// channel, none larger than maxFrameSize: when the payload does not fit
// one frame it is split, the first frame carries every field of t, the
// continuation frames carry only the handle, and all but the last have
// More set (§2.6.14). It returns the bytes and how many frames it wrote (a
// session counts its outgoing ids and the peer's window in frames).
func AppendTransferFrames(b []byte, channel uint16, t *Transfer, maxFrameSize uint32) (out []byte, frames uint32, err error) {
	start := len(b)
	if int64(len(t.Payload))+TransferHeadBound <= int64(maxFrameSize) {
		// Most likely one frame: encoded in place, and kept if it fits.
		b = slices.Grow(b, len(t.Payload)+TransferHeadBound)
		if b, err = AppendFrame(b, FrameAMQP, channel, t); err != nil {
			return b, 0, err
		}
		if len(b)-start <= int(maxFrameSize) {
			return b, 1, nil
		}
		b = b[:start]
	}
	whole := *t
	whole.Payload = nil
	head, err := whole.appendTo(make([]byte, 0, 64))
	if err != nil {
		return b, 0, err
	}
	if size := FrameHeaderSize + int64(len(head)) + int64(len(t.Payload)); size <= int64(maxFrameSize) {
		b = slices.Grow(b, int(size)) // the whole frame in one allocation
		if b, err = AppendFrame(b, FrameAMQP, channel, t); err != nil {
			return b, 0, err
		}
		return b, 1, nil
	}
	payload := t.Payload
	frame := *t // the first frame: every field
	for len(payload) > 0 {
		frame.More = true
		frame.Payload = nil
		head, err := frame.appendTo(nil)
		if err != nil {
			return b[:start], 0, err
		}
		room := int64(maxFrameSize) - FrameHeaderSize - int64(len(head))
		if room <= 0 {
			return b[:start], 0, &EncodeError{Msg: fmt.Sprintf("max frame size %d leaves no room for a transfer payload", maxFrameSize)}
		}
		n := min(int64(len(payload)), room)
		frame.Payload, payload = payload[:n], payload[n:]
		frame.More = len(payload) > 0 || t.More
		if b, err = AppendFrame(b, FrameAMQP, channel, &frame); err != nil {
			return b[:start], 0, err
		}
		frames++
		frame = Transfer{Handle: t.Handle} // continuations: the handle only
	}
	return b, frames, nil
}
