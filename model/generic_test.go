package model

import (
	"context"
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// unknownCounts is an endpoint that cannot count (a generic AMQP broker):
// its entities come with Counts.Unknown and only the locks it holds.
type unknownCounts struct{ *faultClient }

func (u unknownCounts) Entities(ctx context.Context) ([]broker.Entity, error) {
	ents, err := u.faultClient.Entities(ctx)
	for i := range ents {
		ents[i].Counts = broker.Counts{Locked: ents[i].Counts.Locked, Unknown: true}
	}
	return ents, err
}

// TestUnknownCountsShowAsQuestionMarks: counts the endpoint does not know
// are "?" in the tabs, the panes and the entity list, never 0; the locks
// the dashboard holds are counted.
func TestUnknownCountsShowAsQuestionMarks(t *testing.T) {
	clock, c := fixture(t, 3)
	f := newFault(c)
	f.caps = &broker.Capabilities{Has: broker.CanPeekLock | broker.CanDeadLetter | broker.CanPurge,
		Why:  map[broker.Capability]string{broker.CanBrowse: "no peeking here"},
		Warn: map[broker.Capability]string{broker.CanDeadLetter: "RabbitMQ drops the message unless its queue has a dead-letter exchange"}}
	f.noEvents = true
	h := newHarness(t, unknownCounts{f}, clock, Options{}, 120, 30)
	s := h.screen()
	tabs := strings.Split(s, "\n")[0]
	for _, want := range []string{"1 Active ?", "2 Locked 0", "5 DLQ ?"} {
		if !strings.Contains(tabs, want) {
			t.Errorf("tabs %q lack %q", tabs, want)
		}
	}
	if !strings.Contains(s, "orders              ?   0   ?   ?   ?") {
		t.Errorf("the entity list does not show unknown counts as ?:\n%s", s)
	}
	h.key("l")
	if !strings.Contains(h.screen(), "2 Locked 1") {
		t.Fatalf("the held lock is not counted:\n%s", h.screen())
	}
	// Dead-lettering warns what the broker will do with the message.
	h.keys("2", "d")
	if h.m.dialog == nil || !strings.Contains(stripped(strings.Join(h.m.dialog.text, " ")), "RabbitMQ drops the message unless") {
		t.Fatalf("no warning in the dead-letter dialog: %+v", h.m.dialog)
	}
	h.key("esc")
}
