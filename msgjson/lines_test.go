package msgjson

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestRoundTrip writes messages as JSON lines and reads them back as
// messages to send: what a sender set comes back, the broker's own
// properties and the dead-letter reason do not.
func TestRoundTrip(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	in := []*broker.Message{
		{MessageID: "m-1", ContentType: "application/json", CorrelationID: "c", Subject: "s", To: "t", ReplyTo: "r",
			ReplyToSessionID: "rs", SessionID: "sess", PartitionKey: "sess", TimeToLive: time.Hour,
			ApplicationProperties: map[string]any{"n": int64(7), "f": 1.5, "b": true, "s": "x", "nil": nil,
				broker.PropDeadLetterReason: "Poison", broker.PropDeadLetterErrorDescription: "bad"},
			Body: []byte(`{"a":1}`), SequenceNumber: 42, DeliveryCount: 3, EnqueuedTime: at, State: broker.StateActive},
		{MessageID: "m-2", Body: []byte{0, 0xff, 0x10}, ScheduledEnqueueTime: at},
		{MessageID: "m-3", BodyKind: broker.BodyValue, Body: []byte{0x00, 0x53, 0x77, 0xa1, 0x02, 'h', 'i'}},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, m := range in {
		if err := w.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil || w.Count() != 3 || strings.Count(buf.String(), "\n") != 3 {
		t.Fatalf("wrote %d lines (%v):\n%s", w.Count(), err, buf.String())
	}
	r := NewReader(strings.NewReader("\n" + buf.String()))
	for i, want := range in {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		w := want.CopyForSend()
		if w.BodyKind == broker.BodyData && len(w.Body) == 0 {
			w.Body = nil
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("message %d (line %d):\n got %+v\nwant %+v", i, r.Line(), got, w)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("at the end: %v", err)
	}
}

func TestReaderNamesTheBadLine(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"{\"MessageId\":\"a\",\"BodyKind\":\"data\"}\n{\"MesageId\":\"b\"}\n", `line 2: unknown field "MesageId"`},
		{"{\"BodyKind\":\"xml\"}", `line 1: BodyKind "xml" is none of`},
		{"{\"TimeToLive\":\"soon\"}", `line 1: TimeToLive "soon" is not a positive duration`},
		{"{\"Body\":\"x\",\"BodyBase64\":\"eA==\"}", "line 1: both Body and BodyBase64"},
		{"{\"BodyKind\":\"amqp-value\",\"Body\":\"x\"}", "line 1: a amqp-value body comes as BodyBase64"},
		{"not json", "line 1: invalid character"},
		{"{} {}", "line 1: more than one JSON value"},
	} {
		r := NewReader(strings.NewReader(tc.text))
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if errors.Is(err, io.EOF) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
}
