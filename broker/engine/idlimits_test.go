package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// TestSendRefusesLongIDs: a MessageId, SessionId or PartitionKey longer
// than 128 characters (UTF-16 code units, as Service Bus counts) is refused
// on every send path, with nothing stored.
func TestSendRefusesLongIDs(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		f.queue("s", broker.EntitySettings{RequiresSession: true})
		long := strings.Repeat("x", broker.MaxIDLength+1)
		// 65 G clefs: 260 bytes, 130 UTF-16 code units.
		wide := strings.Repeat("\U0001D11E", broker.MaxIDLength/2+1)
		for name, tc := range map[string]struct {
			entity string
			m      *broker.Message
			want   string
		}{
			"MessageId":          {"q", &broker.Message{MessageID: long}, "message 0 has a MessageId of 129 characters; Service Bus allows at most 128"},
			"SessionId":          {"s", &broker.Message{SessionID: long}, "message 0 has a SessionId of 129 characters"},
			"PartitionKey":       {"q", &broker.Message{PartitionKey: long}, "message 0 has a PartitionKey of 129 characters"},
			"surrogate pairs":    {"q", &broker.Message{MessageID: wide}, "MessageId of 130 characters"},
			"SessionId on queue": {"q", &broker.Message{SessionID: long}, "SessionId of 129 characters"},
		} {
			e := wantCode(t, f.e.Send(f.ctx, tc.entity, []*broker.Message{msg("ok"), tc.m}), broker.CodeInvalid)
			if e == nil || !strings.Contains(e.Message, strings.Replace(tc.want, "message 0", "message 1", 1)) || e.TrackingID == "" {
				t.Errorf("%s: send: %v", name, e)
			}
			_, err := f.e.Schedule(f.ctx, tc.entity, t0.Add(time.Minute), []*broker.Message{tc.m})
			if e := wantCode(t, err, broker.CodeInvalid); e == nil || !strings.Contains(e.Message, tc.want) {
				t.Errorf("%s: schedule: %v", name, err)
			}
		}
		f.wantCounts("q", broker.Counts{})
		f.wantCounts("s", broker.Counts{})
		// At the limit, counted in UTF-16 code units: 64 clefs are 256
		// bytes but 128 characters.
		edge := &broker.Message{MessageID: strings.Repeat("\U0001D11E", broker.MaxIDLength/2),
			PartitionKey: strings.Repeat("s", broker.MaxIDLength), SessionID: strings.Repeat("s", broker.MaxIDLength)}
		f.send("q", edge)
		if got := f.receiveOne("q"); got.MessageID != edge.MessageID || got.SessionID != edge.SessionID || got.PartitionKey != edge.PartitionKey {
			t.Fatalf("received %+v", got)
		}
	})
}

// TestEmptySessionID: on a session-aware entity the empty SessionId is a
// session of its own (Service Bus takes it; the Go SDK's
// TestSessionReceiver_blankSessionIDs sends, schedules and accepts it),
// unlike a message without a SessionId; the distinction survives a
// restart.
func TestEmptySessionID(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("s", broker.EntitySettings{RequiresSession: true})
		wantCode(t, f.e.Send(f.ctx, "s", []*broker.Message{msg("none")}), broker.CodeInvalid)
		empty := msg("e1")
		empty.SessionIDSet = true
		f.send("s", empty)
		sched := msg("e2")
		sched.SessionIDSet = true
		if _, err := f.e.Schedule(f.ctx, "s", t0.Add(time.Minute), []*broker.Message{sched}); err != nil {
			t.Fatal(err)
		}
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		f = openFixture(t, newStore(), f.clock)
		f.advance(time.Minute)

		lock, err := f.e.AcceptNamedSession(f.ctx, 1, "s", "", 0)
		if err != nil || lock.SessionID != "" || lock.Token.IsZero() {
			t.Fatalf("accept session \"\": %+v, %v", lock, err)
		}
		_, err = f.e.AcceptNamedSession(f.ctx, 2, "s", "", 0)
		wantCode(t, err, broker.CodeSessionCannotLock)
		got, err := f.e.ReceiveSession(f.ctx, 1, "", broker.ReceiveRequest{Entity: "s", Max: 5})
		if err != nil || len(got) != 2 {
			t.Fatalf("receive from session \"\": %v, %v", idsOf(got), err)
		}
		for _, m := range got {
			if !m.SessionIDSet || m.SessionID != "" {
				t.Errorf("%s: SessionID %q, SessionIDSet %v", m.MessageID, m.SessionID, m.SessionIDSet)
			}
		}
	})
}
