package model

import (
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestComposeDefaultsTypesAndNotice: the ContentType of a new message is a
// real value that is sent; properties can be typed; the notice names the
// sent message's MessageId.
func TestComposeDefaultsTypesAndNotice(t *testing.T) {
	clock, c := fixture(t, 0)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("n")
	if v := h.m.dialog.value(fContentType); v != "application/json" {
		t.Fatalf("ContentType %q", v)
	}
	for i := 0; i < fProperties; i++ {
		h.key("tab")
	}
	h.typeText("s=x; n:int=5; i:int32=-7; f:double=1.5; ok:bool=true; at:time=2025-01-02T15:04:05Z; plain:string=8")
	h.key("ctrl+s")
	if h.m.dialog != nil {
		t.Fatalf("compose still open: %s", h.m.dialog.err)
	}
	act := browse(t, c, "orders", broker.CategoryActive)
	if len(act) != 1 {
		t.Fatalf("%d sent", len(act))
	}
	x := act[0]
	if x.ContentType != "application/json" {
		t.Errorf("ContentType %q, want the default sent", x.ContentType)
	}
	want := map[string]any{"s": "x", "n": int64(5), "i": int32(-7), "f": 1.5, "ok": true,
		"at": time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC), "plain": "8"}
	for k, v := range want {
		got := x.ApplicationProperties[k]
		if tv, ok := v.(time.Time); ok {
			if gt, ok := got.(time.Time); !ok || !gt.Equal(tv) {
				t.Errorf("%s = %#v, want %v", k, got, v)
			}
			continue
		}
		if got != v {
			t.Errorf("%s = %#v (%T), want %#v (%T)", k, got, got, v, v)
		}
	}
	h.wantStatus("sent to orders: MessageId " + x.MessageID[:8])

	// A typed copy round-trips: e shows the types, and sending it
	// unchanged keeps them.
	h.key("e")
	if got := h.m.dialog.value(fProperties); !strings.Contains(got, "n:int=5") || !strings.Contains(got, "ok:bool=true") {
		t.Fatalf("edit shows %q", got)
	}
	h.key("esc")

	// A bad type or value stays in the dialog.
	for _, bad := range []string{"n:int=five", "n:color=red", ":int=5"} {
		h.key("n")
		for i := 0; i < fProperties; i++ {
			h.key("tab")
		}
		h.typeText(bad)
		h.key("ctrl+s")
		if h.m.dialog == nil || h.m.dialog.err == "" {
			t.Fatalf("%q was accepted", bad)
		}
		h.key("esc")
	}
}

// TestCancelScheduledAsksFirst: delete names the sequence numbers it would
// cancel, and esc keeps them.
func TestCancelScheduledAsksFirst(t *testing.T) {
	clock, c := fixture(t, 0)
	if _, err := c.Schedule(t.Context(), "orders", t0.Add(time.Hour), []*broker.Message{msg("a", "a"), msg("b", "b")}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.keys("4", "delete")
	if h.m.dialog == nil || !strings.Contains(strings.Join(h.m.dialog.text, " "), "sequence number 1 of orders") {
		t.Fatalf("no confirmation naming the message: %+v", h.m.dialog)
	}
	h.key("esc")
	if n := len(browse(t, c, "orders", broker.CategoryScheduled)); n != 2 {
		t.Fatalf("esc cancelled: %d left", n)
	}
	h.keys("space", "space", "delete")
	if h.m.dialog == nil || !strings.Contains(strings.Join(h.m.dialog.text, " "), "sequence numbers 1, 2") {
		t.Fatalf("the confirmation does not name both: %+v", h.m.dialog.text)
	}
	h.key("enter")
	if n := len(browse(t, c, "orders", broker.CategoryScheduled)); n != 0 {
		t.Fatalf("%d left", n)
	}
	h.wantStatus("cancelled the scheduled sequence number(s) 1, 2 of orders")
}
