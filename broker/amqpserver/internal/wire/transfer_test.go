package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestAppendTransferFramesSplits(t *testing.T) {
	payload := make([]byte, 3000)
	for i := range payload {
		payload[i] = byte(i)
	}
	tr := &Transfer{Handle: 4, DeliveryID: Some[uint32](9), DeliveryTag: []byte{1, 2, 3}, MessageFormat: Some[uint32](0), Settled: true, Payload: payload}
	b, count, err := AppendTransferFrames([]byte{0xff}, 2, tr, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0xff {
		t.Fatal("existing bytes overwritten")
	}
	b = b[1:]
	var got []byte
	var frames []*Transfer
	for len(b) > 0 {
		fr, n, err := DecodeFrame(b)
		if err != nil {
			t.Fatal(err)
		}
		if n > 1024 {
			t.Fatalf("frame of %d bytes exceeds 1024", n)
		}
		if fr.Channel != 2 {
			t.Fatalf("channel %d", fr.Channel)
		}
		x := fr.Body.(*Transfer)
		frames = append(frames, x)
		got = append(got, x.Payload...)
		b = b[n:]
	}
	if !bytes.Equal(got, payload) {
		t.Fatal("reassembled payload differs")
	}
	if len(frames) != 3 || count != 3 {
		t.Fatalf("%d frames (%d counted), want 3", len(frames), count)
	}
	first, last := frames[0], frames[len(frames)-1]
	if !first.More || !first.Settled || first.DeliveryID != Some[uint32](9) || !bytes.Equal(first.DeliveryTag, []byte{1, 2, 3}) || first.Handle != 4 {
		t.Fatalf("first frame %+v", first)
	}
	if !frames[1].More || frames[1].DeliveryTag != nil || frames[1].DeliveryID.Set || frames[1].Handle != 4 {
		t.Fatalf("middle frame %+v", frames[1])
	}
	if last.More || last.Handle != 4 {
		t.Fatalf("last frame %+v", last)
	}
}

func TestAppendTransferFramesSingle(t *testing.T) {
	tr := &Transfer{Handle: 1, DeliveryID: Some[uint32](0), DeliveryTag: []byte{1}, Payload: make([]byte, 100)}
	one, err := AppendFrame(nil, FrameAMQP, 0, tr)
	if err != nil {
		t.Fatal(err)
	}
	// Exactly the size of the single frame: one frame.
	b, n, err := AppendTransferFrames(nil, 0, tr, uint32(len(one)))
	if err != nil || !bytes.Equal(b, one) || n != 1 {
		t.Fatalf("single frame: %v\n% x\n% x", err, b, one)
	}
	// One byte less: two frames.
	b, n, err = AppendTransferFrames(nil, 0, tr, uint32(len(one)-1))
	if err != nil || n != 2 {
		t.Fatalf("split: %d frames, %v", n, err)
	}
	if _, first, _ := DecodeFrame(b); first == len(b) {
		t.Fatal("payload not split")
	}
	// A frame size that cannot hold the performative.
	if _, _, err := AppendTransferFrames(nil, 0, tr, 16); !errors.Is(err, ErrEncode) {
		t.Fatalf("tiny frame size error = %v", err)
	}
}
