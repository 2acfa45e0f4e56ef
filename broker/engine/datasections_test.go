package engine

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// sectioned returns a message whose body is two data sections, with an
// AMQP passthrough.
func sectioned(id string) *broker.Message {
	m := &broker.Message{MessageID: id, ApplicationProperties: map[string]any{"k": "v"}, AMQP: passthrough()}
	m.SetSections([][]byte{[]byte("Hello World"), []byte("And another message!")})
	return m
}

func passthrough() *broker.Passthrough {
	return &broker.Passthrough{Durable: true, Priority: 100, HasPriority: true,
		MessageAnnotations: []byte{0xc1, 0x06, 0x02, 0xa3, 0x01, 'k', 0xa1, 0x00}, Footer: []byte{0xc1, 0x01, 0x00}}
}

// wantSections checks that m carries the body of sectioned, cut as sent,
// and its passthrough.
func wantSections(t *testing.T, where string, m *broker.Message) {
	t.Helper()
	got := m.Sections()
	if len(got) != 2 || !bytes.Equal(got[0], []byte("Hello World")) || !bytes.Equal(got[1], []byte("And another message!")) {
		t.Fatalf("%s: sections %q (DataSections %v), want the two sent", where, got, m.DataSections)
	}
	if !reflect.DeepEqual(m.AMQP, passthrough()) {
		t.Fatalf("%s: passthrough %+v, want %+v", where, m.AMQP, passthrough())
	}
}

// TestDataSectionsTravel sends a body of two data sections, with an AMQP
// passthrough, and finds both as sent wherever the message goes: receive, peek, defer and receive
// by sequence number, dead-letter sub-queue, topic fan-out (with and without
// a rule action), auto-forwarding, and after a restart. Its size counts the
// body bytes once.
func TestDataSectionsTravel(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{LockDuration: time.Minute})
		f.queue("dst", broker.EntitySettings{})
		f.queue("fwd", broker.EntitySettings{ForwardTo: "dst"})
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}); err != nil {
			t.Fatal(err)
		}
		for _, sub := range []broker.Entity{
			{Path: "t/Subscriptions/all", Kind: broker.KindSubscription},
			{Path: "t/Subscriptions/act", Kind: broker.KindSubscription,
				Rules: []broker.Rule{{Name: "r", SQL: "1=1", Action: "SET sys.Label = 'acted'"}}},
		} {
			if err := f.e.CreateEntity(f.ctx, sub); err != nil {
				t.Fatal(err)
			}
		}
		plain := &broker.Message{MessageID: "plain", Body: []byte("Hello WorldAnd another message!")}
		f.send("q", sectioned("a"), sectioned("b"), sectioned("c"), plain)
		f.send("t", sectioned("t"))
		f.send("fwd", sectioned("f"))

		whole := sectioned("a")
		whole.DataSections = nil
		f.queue("size", broker.EntitySettings{})
		f.send("size", sectioned("a"), whole)
		if sz := f.browse("size", broker.CategoryActive); sz[0].Size != sz[1].Size || sz[0].Size < 31 {
			t.Errorf("sizes %d (two sections) and %d (one): want the same, the body counted once", sz[0].Size, sz[1].Size)
		}
		for _, m := range f.browse("q", broker.CategoryActive)[:3] {
			wantSections(t, "peek "+m.MessageID, m)
		}
		a, b, c, p := f.receiveOne("q"), f.receiveOne("q"), f.receiveOne("q"), f.receiveOne("q")
		wantSections(t, "receive", a)
		if p.DataSections != nil {
			t.Errorf("a one-section body got DataSections %v", p.DataSections)
		}
		f.mustSettle(broker.Defer, "q", b)
		f.mustSettle(broker.DeadLetter, "q", c)
		d, err := f.e.ReceiveDeferred(f.ctx, "q", []int64{b.SequenceNumber})
		if err != nil || len(d) != 1 {
			t.Fatalf("receive deferred: %v, %v", d, err)
		}
		wantSections(t, "receive deferred", d[0])
		wantSections(t, "dead-letter sub-queue", f.receiveOne("q/$DeadLetterQueue"))
		wantSections(t, "subscription", f.receiveOne("t/Subscriptions/all"))
		acted := f.receiveOne("t/Subscriptions/act")
		wantSections(t, "subscription with an action", acted)
		if acted.Subject != "acted" {
			t.Errorf("the rule action did not run: subject %q", acted.Subject)
		}
		wantSections(t, "forwarded", f.receiveOne("dst"))

		f.send("q", sectioned("r"))
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		ms := g.browse("q", broker.CategoryActive)
		i := slices.IndexFunc(ms, func(m *broker.Message) bool { return m.MessageID == "r" })
		if i < 0 {
			t.Fatalf("message r gone after the restart: %v", idsOf(ms))
		}
		wantSections(t, "after a restart", ms[i])
	})
}

// TestDataSectionsChecked refuses lengths that do not describe the body:
// nothing is stored and the error names the message.
func TestDataSectionsChecked(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{})
	bad := &broker.Message{MessageID: "bad", Body: []byte("abc"), DataSections: []int{1, 1}}
	err := f.e.Send(f.ctx, "q", []*broker.Message{msg("ok"), bad})
	be := wantCode(t, err, broker.CodeInvalid)
	if want := "message 1: the data sections hold 2 bytes, but the body has 3"; be.Message != want {
		t.Fatalf("message %q, want %q", be.Message, want)
	}
	f.wantCounts("q", broker.Counts{})
}
