package wire

import (
	"encoding/binary"
	"fmt"
	"io"
)

// FrameType is the type byte of a frame header (§2.3.1).
type FrameType uint8

// Frame types.
const (
	FrameAMQP FrameType = 0
	FrameSASL FrameType = 1
)

// FrameHeaderSize is the size of the fixed frame header; a frame of this
// size alone is an empty frame (a heartbeat).
const FrameHeaderSize = 8

// MinMaxFrameSize is the smallest max-frame-size a peer may announce
// (§2.7.1, MIN-MAX-FRAME-SIZE).
const MinMaxFrameSize = 512

// FrameHeader is the fixed header of a frame.
type FrameHeader struct {
	// Size is the total frame size, header included.
	Size uint32
	// DataOffset is the header size in 4-byte words (at least 2).
	DataOffset uint8
	Type       FrameType
	// Channel is the session channel (AMQP frames); SASL frames ignore it.
	Channel uint16
}

// Frame is one decoded frame. Body is nil for an empty frame (heartbeat).
type Frame struct {
	Type    FrameType
	Channel uint16
	Body    Performative
}

// ParseFrameHeader decodes and checks the first FrameHeaderSize bytes of b.
func ParseFrameHeader(b []byte) (FrameHeader, error) {
	if len(b) < FrameHeaderSize {
		return FrameHeader{}, &DecodeError{Offset: len(b), Msg: fmt.Sprintf("frame header needs %d bytes, have %d", FrameHeaderSize, len(b))}
	}
	h := FrameHeader{
		Size:       binary.BigEndian.Uint32(b),
		DataOffset: b[4],
		Type:       FrameType(b[5]),
		Channel:    binary.BigEndian.Uint16(b[6:]),
	}
	switch {
	case h.Size < FrameHeaderSize:
		return h, &DecodeError{Offset: 0, Msg: fmt.Sprintf("frame size %d is smaller than the header", h.Size)}
	case h.DataOffset < 2:
		return h, &DecodeError{Offset: 4, Msg: fmt.Sprintf("frame data offset %d is below 2", h.DataOffset)}
	case uint32(h.DataOffset)*4 > h.Size:
		return h, &DecodeError{Offset: 4, Msg: fmt.Sprintf("frame data offset %d beyond frame size %d", h.DataOffset, h.Size)}
	case h.Type != FrameAMQP && h.Type != FrameSASL:
		return h, &DecodeError{Offset: 5, Msg: fmt.Sprintf("unknown frame type 0x%02x", uint8(h.Type))}
	}
	return h, nil
}

// DecodeFrame decodes one complete frame from the start of b and returns it
// with the number of bytes it took. Byte slices in the body alias b.
func DecodeFrame(b []byte) (Frame, int, error) {
	h, err := ParseFrameHeader(b)
	if err != nil {
		return Frame{}, 0, err
	}
	if uint64(h.Size) > uint64(len(b)) {
		return Frame{}, 0, &DecodeError{Offset: 0, Msg: fmt.Sprintf("frame of %d bytes, only %d available", h.Size, len(b))}
	}
	var d Decoder
	fr, err := decodeFrameBody(&d, h, b[:h.Size], new(Transfer))
	return fr, int(h.Size), err
}

// decodeFrameBody decodes the body of a whole frame (header included in
// b, so error offsets count from the frame's start) with d, into t when it
// is a transfer.
func decodeFrameBody(d *Decoder, h FrameHeader, b []byte, t *Transfer) (Frame, error) {
	fr := Frame{Type: h.Type, Channel: h.Channel}
	*d = Decoder{buf: b, off: int(h.DataOffset) * 4}
	if d.Len() == 0 {
		return fr, nil
	}
	body, err := d.readPerformative(h.Type, t)
	if err != nil {
		return Frame{}, err
	}
	fr.Body = body
	return fr, nil
}

// DecodePerformative decodes a frame body (without the frame header) of
// the given frame type.
func DecodePerformative(typ FrameType, body []byte) (Performative, error) {
	d := Decoder{buf: body}
	return d.readPerformative(typ, new(Transfer))
}

// readPerformative reads the performative that starts a frame body; a
// transfer is read into t and takes the rest of the body as its payload.
// Bytes after any other performative are ignored.
func (d *Decoder) readPerformative(typ FrameType, t *Transfer) (Performative, error) {
	start := d.off
	code, sym, err := d.ReadDescriptor()
	if err != nil {
		return nil, err
	}
	if typ == FrameSASL {
		switch {
		case sym != "":
		case code == descSASLMechanisms:
			return readSASLMechanisms(d)
		case code == descSASLInit:
			return readSASLInit(d)
		case code == descSASLChallenge:
			return readSASLChallenge(d)
		case code == descSASLResponse:
			return readSASLResponse(d)
		case code == descSASLOutcome:
			return readSASLOutcome(d)
		}
		d.off = start
		return nil, d.errorf("%s in a SASL frame", descriptorName(code, sym))
	}
	switch {
	case sym != "":
	case code == descOpen:
		return readOpen(d)
	case code == descBegin:
		return readBegin(d)
	case code == descAttach:
		return readAttach(d)
	case code == descFlow:
		return readFlow(d)
	case code == descTransfer:
		return readTransfer(d, t)
	case code == descDisposition:
		return readDisposition(d)
	case code == descDetach:
		return readDetach(d)
	case code == descEnd:
		e, err := readErrorOnly(d, "end")
		if err != nil {
			return nil, err
		}
		return &End{Error: e}, nil
	case code == descClose:
		e, err := readErrorOnly(d, "close")
		if err != nil {
			return nil, err
		}
		return &Close{Error: e}, nil
	}
	d.off = start
	return nil, d.errorf("%s is not a performative", descriptorName(code, sym))
}

// AppendFrame appends a frame of type typ on channel carrying body (nil
// for an empty frame). For a *Transfer the payload follows the
// performative. The caller keeps the frame within the peer's max frame
// size.
func AppendFrame(b []byte, typ FrameType, channel uint16, body Performative) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 2, byte(typ), byte(channel>>8), byte(channel))
	if body != nil {
		var err error
		if b, err = body.appendTo(b); err != nil {
			return b[:start], err
		}
	}
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start))
	return b, nil
}

// AppendEmptyFrame appends an empty AMQP frame on channel 0: the heartbeat
// that keeps an idle connection open.
func AppendEmptyFrame(b []byte) []byte {
	return append(b, 0, 0, 0, FrameHeaderSize, 2, byte(FrameAMQP), 0, 0)
}

// ProtocolID identifies the layer a protocol header starts (§2.2, §5.2.1,
// §5.3.1).
type ProtocolID uint8

// Protocol ids.
const (
	ProtocolAMQP ProtocolID = 0
	ProtocolTLS  ProtocolID = 2
	ProtocolSASL ProtocolID = 3
)

// ProtocolHeaderSize is the size of a protocol header.
const ProtocolHeaderSize = 8

// ProtocolHeader is the 8-byte header that starts a connection and each
// security layer: "AMQP", the protocol id, and version 1.0.0.
type ProtocolHeader struct {
	ID       ProtocolID
	Major    uint8
	Minor    uint8
	Revision uint8
}

// Protocol headers of AMQP 1.0.0 itself and of its SASL layer.
var (
	HeaderAMQP = ProtocolHeader{ID: ProtocolAMQP, Major: 1, Minor: 0, Revision: 0}
	HeaderSASL = ProtocolHeader{ID: ProtocolSASL, Major: 1, Minor: 0, Revision: 0}
	HeaderTLS  = ProtocolHeader{ID: ProtocolTLS, Major: 1, Minor: 0, Revision: 0}
)

// Append appends the 8 header bytes.
func (h ProtocolHeader) Append(b []byte) []byte {
	return append(b, 'A', 'M', 'Q', 'P', byte(h.ID), h.Major, h.Minor, h.Revision)
}

// ParseProtocolHeader decodes a protocol header. Bytes that do not start
// with "AMQP" are an error; any id and version are returned for the
// caller to accept or refuse (answering with its own header, as §2.2 asks).
func ParseProtocolHeader(b []byte) (ProtocolHeader, error) {
	if len(b) < ProtocolHeaderSize {
		return ProtocolHeader{}, &DecodeError{Offset: len(b), Msg: fmt.Sprintf("protocol header needs %d bytes, have %d", ProtocolHeaderSize, len(b))}
	}
	if string(b[:4]) != "AMQP" {
		return ProtocolHeader{}, &DecodeError{Offset: 0, Msg: fmt.Sprintf("protocol header %q does not start with AMQP", b[:ProtocolHeaderSize])}
	}
	return ProtocolHeader{ID: ProtocolID(b[4]), Major: b[5], Minor: b[6], Revision: b[7]}, nil
}

// The read buffer of a FrameReader starts at minReadBuffer bytes, a few
// frames of a 1 KiB message per system call, which is most of an idle
// connection's memory. A read that fills the whole buffer means the peer
// sends faster than the listener reads (a pipelining sender): the buffer
// grows to maxReadBuffer, so that one system call takes a whole burst of
// transfers instead of one per seven of them (BENCHMARKS.md, session 28:
// read system calls per message of a pipelined send). After shrinkAfter
// reads in a row that the small buffer would have held, it shrinks back.
const (
	minReadBuffer = 8 << 10
	maxReadBuffer = 64 << 10
	shrinkAfter   = 256
)

// FrameReader reads protocol headers and frames from a stream and refuses
// frames larger than its maximum frame size. The performatives it returns
// alias its buffer (transfer payloads, delivery tags, binary values) and
// stay valid only until the next read; every transfer it returns is the
// same value, read again, so that the frames of a message stream allocate
// nothing to be read.
//
// A frame that the read buffer holds whole is decoded where it lies; one
// that spans reads is gathered into a buffer of the reader's own.
type FrameReader struct {
	r        readBuffer
	max      uint32
	buf      []byte
	hb       [FrameHeaderSize]byte // a frame header being read (here, not on the heap)
	dec      Decoder
	transfer Transfer
}

// readBuffer is a buffered reader (bufio.Reader's reading part) whose
// buffer grows and shrinks with the reads it sees (see minReadBuffer).
type readBuffer struct {
	src   io.Reader
	b     []byte
	r, w  int  // b[r:w] is buffered
	full  bool // the last read filled the whole buffer
	small int  // reads in a row that minReadBuffer would have held
	err   error
}

// Read reads from the buffer, filling it with one read of the source when
// it is empty; a read at least as large as the buffer bypasses it.
func (rb *readBuffer) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if rb.r == rb.w {
		if rb.err != nil {
			err := rb.err
			rb.err = nil
			return 0, err
		}
		rb.r, rb.w = 0, 0
		rb.resize()
		if len(p) >= len(rb.b) {
			n, err := rb.src.Read(p)
			rb.note(n, len(p))
			return n, err
		}
		n, err := rb.src.Read(rb.b)
		rb.note(n, len(rb.b))
		rb.w = n
		if n == 0 {
			return 0, err
		}
		rb.err = err
	}
	n := copy(p, rb.b[rb.r:rb.w])
	rb.r += n
	return n, nil
}

// note records how a read of room bytes went.
func (rb *readBuffer) note(n, room int) {
	switch {
	case n == room:
		rb.full, rb.small = true, 0
	case n <= minReadBuffer:
		rb.small++
	default:
		rb.small = 0
	}
}

// resize sizes the empty buffer: maxReadBuffer after a read filled it,
// minReadBuffer after shrinkAfter small reads.
func (rb *readBuffer) resize() {
	size := len(rb.b)
	switch {
	case size == 0:
		size = minReadBuffer
	case rb.full:
		size = maxReadBuffer
	case rb.small >= shrinkAfter:
		size = minReadBuffer
	}
	rb.full = false
	if size != len(rb.b) {
		rb.b = make([]byte, size)
	}
}

// NewFrameReader returns a reader over r that accepts frames of at most
// maxFrameSize bytes (at least FrameHeaderSize; before the open exchange a
// listener uses MinMaxFrameSize, or its own announced maximum).
func NewFrameReader(r io.Reader, maxFrameSize uint32) *FrameReader {
	fr := &FrameReader{r: readBuffer{src: r}}
	fr.SetMaxFrameSize(maxFrameSize)
	return fr
}

// SetMaxFrameSize changes the maximum frame size (after open).
func (fr *FrameReader) SetMaxFrameSize(n uint32) {
	fr.max = max(n, FrameHeaderSize)
}

// MaxFrameSize returns the current maximum frame size.
func (fr *FrameReader) MaxFrameSize() uint32 { return fr.max }

// ReadProtocolHeader reads an 8-byte protocol header.
func (fr *FrameReader) ReadProtocolHeader() (ProtocolHeader, error) {
	var b [ProtocolHeaderSize]byte
	if _, err := io.ReadFull(&fr.r, b[:]); err != nil {
		return ProtocolHeader{}, err
	}
	return ParseProtocolHeader(b[:])
}

// ReadFrame reads and decodes the next frame. I/O errors are returned as
// they are (io.EOF at a clean end, io.ErrUnexpectedEOF inside a frame); a
// frame over the maximum size is a *FrameSizeError, corrupt content a
// *DecodeError.
func (fr *FrameReader) ReadFrame() (Frame, error) {
	if b, h, ok := fr.bufferedFrame(); ok {
		fr.r.r += len(b)
		return decodeFrameBody(&fr.dec, h, b, &fr.transfer)
	}
	hb := fr.hb[:]
	if _, err := io.ReadFull(&fr.r, hb); err != nil {
		return Frame{}, err
	}
	h, err := ParseFrameHeader(hb)
	if err != nil {
		return Frame{}, err
	}
	if h.Size > fr.max {
		return Frame{}, &FrameSizeError{Size: h.Size, Max: fr.max}
	}
	// Grow the buffer as bytes arrive rather than trusting the announced
	// size, so a peer cannot make the reader allocate what it never sends.
	b := append(fr.buf[:0], hb...)
	for len(b) < int(h.Size) {
		n := min(int(h.Size), max(2*len(b), 64<<10))
		if cap(b) < n {
			nb := make([]byte, len(b), n)
			copy(nb, b)
			b = nb
		}
		got := len(b)
		b = b[:n]
		if _, err := io.ReadFull(&fr.r, b[got:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return Frame{}, err
		}
	}
	fr.buf = b
	return decodeFrameBody(&fr.dec, h, b, &fr.transfer)
}

// bufferedFrame returns the next frame and its header when the read buffer
// holds all of it and its header is valid (anything else takes ReadFrame's
// reading path, which reports what is wrong), without consuming it.
func (fr *FrameReader) bufferedFrame() ([]byte, FrameHeader, bool) {
	rb := &fr.r
	avail := rb.b[rb.r:rb.w]
	if len(avail) < FrameHeaderSize {
		return nil, FrameHeader{}, false
	}
	h, err := ParseFrameHeader(avail[:FrameHeaderSize])
	if err != nil || h.Size > fr.max || int(h.Size) > len(avail) {
		return nil, FrameHeader{}, false
	}
	return avail[:h.Size:h.Size], h, true
}
