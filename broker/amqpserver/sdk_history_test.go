package amqpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// TestSDKHistoryNamesTheLinks: a message sent, received, renewed and
// abandoned by SDK clients has a history that names the connection,
// container and link of each step.
func TestSDKHistoryNamesTheLinks(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	rcv, msg := sendThenReceive(t, ctx, c, "q", 1, "hello")
	if err := rcv.RenewMessageLock(ctx, msg, nil); err != nil {
		t.Fatal(err)
	}
	if err := rcv.AbandonMessage(ctx, msg, nil); err != nil {
		t.Fatal(err)
	}
	h, err := env.eng.History(ctx, "q", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []broker.EventKind{broker.EventSent, broker.EventLocked, broker.EventRenewed, broker.EventAbandoned}
	if len(h.Events) != len(want) {
		t.Fatalf("history: %+v", h.Events)
	}
	for i, ev := range h.Events {
		if ev.Kind != want[i] || !strings.HasPrefix(ev.Actor, "connection ") || !strings.Contains(ev.Actor, "(container ") || !strings.Contains(ev.Actor, " link ") {
			t.Errorf("event %d: %s by %q; want %s by a connection's link", i, ev.Kind, ev.Actor, want[i])
		}
	}
	if h.Events[0].Actor == h.Events[1].Actor {
		t.Errorf("the sender and the receiver have the same actor %q", h.Events[0].Actor)
	}
}
