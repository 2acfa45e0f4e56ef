package wire

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestProtocolHeaders(t *testing.T) {
	if got := HeaderAMQP.Append(nil); string(got) != "AMQP\x00\x01\x00\x00" {
		t.Fatalf("AMQP header % x", got)
	}
	if got := HeaderSASL.Append(nil); string(got) != "AMQP\x03\x01\x00\x00" {
		t.Fatalf("SASL header % x", got)
	}
	h, err := ParseProtocolHeader([]byte("AMQP\x03\x01\x00\x00"))
	if err != nil || h != HeaderSASL {
		t.Fatalf("ParseProtocolHeader = %+v, %v", h, err)
	}
	h, err = ParseProtocolHeader([]byte("AMQP\x00\x00\x09\x01"))
	if err != nil || h != (ProtocolHeader{ID: ProtocolAMQP, Major: 0, Minor: 9, Revision: 1}) {
		t.Fatalf("AMQP 0-9-1 header = %+v, %v", h, err)
	}
	for _, in := range []string{"HTTP/1.1", "AMQP"} {
		if _, err := ParseProtocolHeader([]byte(in)); !errors.Is(err, ErrDecode) {
			t.Errorf("ParseProtocolHeader(%q) error = %v", in, err)
		}
	}
}

func TestFrameHeader(t *testing.T) {
	if got := AppendEmptyFrame(nil); !bytes.Equal(got, []byte{0, 0, 0, 8, 2, 0, 0, 0}) {
		t.Fatalf("empty frame % x", got)
	}
	b, err := AppendFrame(nil, FrameAMQP, 0x0102, &Close{})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0, 12, 2, 0, 1, 2, 0x00, 0x53, 0x18, 0x45}
	if !bytes.Equal(b, want) {
		t.Fatalf("close frame % x, want % x", b, want)
	}
	fr, n, err := DecodeFrame(AppendEmptyFrame(nil))
	if err != nil || n != 8 || fr.Body != nil || fr.Type != FrameAMQP {
		t.Fatalf("empty frame decodes as %+v %d %v", fr, n, err)
	}
	// An extended header (doff 3) is skipped.
	ext := []byte{0, 0, 0, 16, 3, 0, 0, 0, 0xee, 0xee, 0xee, 0xee, 0x00, 0x53, 0x18, 0x45}
	fr, _, err = DecodeFrame(ext)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fr.Body.(*Close); !ok {
		t.Fatalf("extended-header frame body %T", fr.Body)
	}
	cases := []struct {
		in  []byte
		msg string
	}{
		{[]byte{0, 0, 0}, "frame header needs 8 bytes, have 3"},
		{[]byte{0, 0, 0, 7, 2, 0, 0, 0}, "frame size 7 is smaller than the header"},
		{[]byte{0, 0, 0, 8, 1, 0, 0, 0}, "data offset 1 is below 2"},
		{[]byte{0, 0, 0, 8, 3, 0, 0, 0}, "data offset 3 beyond frame size 8"},
		{[]byte{0, 0, 0, 8, 2, 9, 0, 0}, "unknown frame type 0x09"},
		{[]byte{0, 0, 0, 9, 2, 0, 0, 0}, "frame of 9 bytes, only 8 available"},
	}
	for _, c := range cases {
		_, _, err := DecodeFrame(c.in)
		if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("DecodeFrame(% x) error = %v, want %q", c.in, err, c.msg)
		}
	}
}

func TestFrameReader(t *testing.T) {
	var stream []byte
	stream = HeaderSASL.Append(stream)
	stream, _ = AppendFrame(stream, FrameSASL, 0, &SASLInit{Mechanism: MechanismAnonymous})
	stream = HeaderAMQP.Append(stream)
	stream, _ = AppendFrame(stream, FrameAMQP, 0, &Open{ContainerID: "c", MaxFrameSize: 4096})
	stream = AppendEmptyFrame(stream)
	transfer, _ := AppendFrame(nil, FrameAMQP, 3, &Transfer{Handle: 1, Payload: bytes.Repeat([]byte{7}, 1000)})
	stream = append(stream, transfer...)

	r := NewFrameReader(bytes.NewReader(stream), MinMaxFrameSize)
	if h, err := r.ReadProtocolHeader(); err != nil || h != HeaderSASL {
		t.Fatalf("first header %+v %v", h, err)
	}
	fr, err := r.ReadFrame()
	if err != nil || !reflect.DeepEqual(fr, Frame{Type: FrameSASL, Body: &SASLInit{Mechanism: MechanismAnonymous}}) {
		t.Fatalf("sasl-init frame %+v %v", fr, err)
	}
	if h, err := r.ReadProtocolHeader(); err != nil || h != HeaderAMQP {
		t.Fatalf("second header %+v %v", h, err)
	}
	fr, err = r.ReadFrame()
	if err != nil || fr.Body.(*Open).MaxFrameSize != 4096 {
		t.Fatalf("open frame %+v %v", fr, err)
	}
	fr, err = r.ReadFrame()
	if err != nil || fr.Body != nil {
		t.Fatalf("heartbeat %+v %v", fr, err)
	}
	// The transfer frame is 1000+ bytes: above the 512 limit.
	_, err = r.ReadFrame()
	var fse *FrameSizeError
	if !errors.As(err, &fse) || !errors.Is(err, ErrFrameTooLarge) || fse.Max != MinMaxFrameSize || fse.Size != uint32(len(transfer)) {
		t.Fatalf("oversized frame error = %v", err)
	}
	if r.MaxFrameSize() != MinMaxFrameSize {
		t.Fatalf("MaxFrameSize = %d", r.MaxFrameSize())
	}

	// Raising the limit lets the same frame through.
	r = NewFrameReader(bytes.NewReader(stream), 4096)
	_, _ = r.ReadProtocolHeader()
	_, _ = r.ReadFrame()
	_, _ = r.ReadProtocolHeader()
	_, _ = r.ReadFrame()
	_, _ = r.ReadFrame()
	fr, err = r.ReadFrame()
	if err != nil || fr.Channel != 3 || len(fr.Body.(*Transfer).Payload) != 1000 {
		t.Fatalf("transfer frame %+v %v", fr, err)
	}
	if _, err := r.ReadFrame(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

// TestFrameReaderBuffered reads the same frames decoded where the read
// buffer holds them and gathered across one-byte reads.
func TestFrameReaderBuffered(t *testing.T) {
	var stream []byte
	for i := range 3 {
		stream, _ = AppendFrame(stream, FrameAMQP, uint16(i), &Transfer{Handle: uint32(i), DeliveryID: Some(uint32(i)), Payload: bytes.Repeat([]byte{byte(i)}, 1000)})
	}
	stream = AppendEmptyFrame(stream)
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"whole", bytes.NewReader(stream)},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(stream))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewFrameReader(tc.r, 4096)
			for i := range 3 {
				fr, err := r.ReadFrame()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				tr := fr.Body.(*Transfer)
				if fr.Channel != uint16(i) || tr.Handle != uint32(i) || !bytes.Equal(tr.Payload, bytes.Repeat([]byte{byte(i)}, 1000)) {
					t.Fatalf("frame %d: channel %d, handle %d, payload of %d bytes", i, fr.Channel, tr.Handle, len(tr.Payload))
				}
			}
			if fr, err := r.ReadFrame(); err != nil || fr.Body != nil {
				t.Fatalf("heartbeat %+v %v", fr, err)
			}
			if _, err := r.ReadFrame(); err != io.EOF {
				t.Fatalf("at the end: %v, want io.EOF", err)
			}
		})
	}
}

func TestFrameReaderTruncated(t *testing.T) {
	// A header that announces 1 MiB and then ends: the reader reports
	// io.ErrUnexpectedEOF without allocating the announced megabyte.
	in := []byte{0, 0x10, 0, 0, 2, 0, 0, 0, 0x00, 0x53}
	r := NewFrameReader(bytes.NewReader(in), 4<<20)
	if _, err := r.ReadFrame(); err != io.ErrUnexpectedEOF {
		t.Fatalf("error = %v, want io.ErrUnexpectedEOF", err)
	}
	if cap(r.buf) > 128<<10 {
		t.Fatalf("reader grew its buffer to %d bytes for a 10-byte input", cap(r.buf))
	}
	r = NewFrameReader(bytes.NewReader(in[:5]), 4<<20)
	if _, err := r.ReadFrame(); err != io.ErrUnexpectedEOF {
		t.Fatalf("short header error = %v", err)
	}
	r = NewFrameReader(bytes.NewReader([]byte{0, 0, 0, 4, 2, 0, 0, 0}), 512)
	if _, err := r.ReadFrame(); !errors.Is(err, ErrDecode) {
		t.Fatalf("bad header error = %v", err)
	}
	if (&FrameSizeError{Size: 9, Max: 8}).Error() != "amqp frame of 9 bytes exceeds the maximum frame size 8" {
		t.Fatal((&FrameSizeError{Size: 9, Max: 8}).Error())
	}
}

func TestAppendFrameError(t *testing.T) {
	b, err := AppendFrame([]byte{1}, FrameAMQP, 0, &Open{ContainerID: "c", Properties: Map{{Symbol("x"), struct{}{}}}})
	if !errors.Is(err, ErrEncode) || !bytes.Equal(b, []byte{1}) {
		t.Fatalf("AppendFrame = % x, %v", b, err)
	}
}
