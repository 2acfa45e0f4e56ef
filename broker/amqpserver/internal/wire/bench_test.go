package wire

import (
	"bytes"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// benchMessage is a delivered message with a 1 KiB body and a few
// application properties, as a typical Service Bus message.
func benchMessage() *broker.Message {
	m := fullMessage()
	m.Body = bytes.Repeat([]byte("x"), 1024)
	m.ApplicationProperties = map[string]any{"tenant": "contoso", "attempt": int32(2), "urgent": true}
	m.DataSections = nil // one data section, as SDKs send a body
	return m
}

func BenchmarkEncodeMessage1KiB(b *testing.B) {
	m := benchMessage()
	buf := EncodeMessage(nil, m, EncodeOptions{DeliveryCount: true})
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = EncodeMessage(buf[:0], m, EncodeOptions{DeliveryCount: true})
	}
}

func BenchmarkDecodeMessage1KiB(b *testing.B) {
	buf := EncodeMessage(nil, benchMessage(), EncodeOptions{DeliveryCount: true, LockToken: true})
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMessage(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeTransferFrame(b *testing.B) {
	payload := EncodeMessage(nil, benchMessage(), EncodeOptions{DeliveryCount: true})
	tag := DeliveryTag(lockTok)
	tr := &Transfer{Handle: 1, DeliveryID: Some[uint32](7), DeliveryTag: tag[:], MessageFormat: Some[uint32](0), Payload: payload}
	buf, _ := AppendFrame(nil, FrameAMQP, 1, tr)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendFrame(buf[:0], FrameAMQP, 1, tr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeTransferFrame(b *testing.B) {
	payload := EncodeMessage(nil, benchMessage(), EncodeOptions{DeliveryCount: true})
	tag := DeliveryTag(lockTok)
	buf, _ := AppendFrame(nil, FrameAMQP, 1, &Transfer{Handle: 1, DeliveryID: Some[uint32](7), DeliveryTag: tag[:], MessageFormat: Some[uint32](0), Payload: payload})
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeFrame(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFrameReaderTransfer(b *testing.B) {
	payload := EncodeMessage(nil, benchMessage(), EncodeOptions{DeliveryCount: true})
	frame, _ := AppendFrame(nil, FrameAMQP, 1, &Transfer{Handle: 1, DeliveryID: Some[uint32](7), DeliveryTag: []byte{1}, Payload: payload})
	stream := bytes.Repeat(frame, 64)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	r := bytes.NewReader(stream)
	fr := NewFrameReader(r, 1<<20)
	n := 0
	for b.Loop() {
		if n == 64 {
			r.Reset(stream)
			n = 0
		}
		if _, err := fr.ReadFrame(); err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// BenchmarkEncodeDelivery encodes a delivery as the listener does for each
// message it sends: the message into a new payload, then its transfer
// frame into a new buffer.
func BenchmarkEncodeDelivery(b *testing.B) {
	m := benchMessage()
	tag := DeliveryTag(lockTok)
	b.ReportAllocs()
	for b.Loop() {
		payload := EncodeMessage(nil, m, EncodeOptions{DeliveryCount: true, LockToken: true})
		tr := &Transfer{Handle: 1, DeliveryID: Some[uint32](7), DeliveryTag: tag[:], MessageFormat: Some[uint32](0), Payload: payload}
		if _, _, err := AppendTransferFrames(nil, 1, tr, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeOwnedMessage1KiB is BenchmarkDecodeMessage1KiB as the
// listener decodes a message it stores: the body read in place.
func BenchmarkDecodeOwnedMessage1KiB(b *testing.B) {
	buf := EncodeMessage(nil, benchMessage(), EncodeOptions{DeliveryCount: true, LockToken: true})
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeOwnedMessage(buf); err != nil {
			b.Fatal(err)
		}
	}
}
