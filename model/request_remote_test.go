package model

import (
	"testing"

	"github.com/peeklock/peeklock/broker/engine"
)

// TestFindRequestOverRemote runs the search on the remote client, through
// the AMQP listener and the admin API in front of the engine: it peeks
// (Browse) entity after entity and finds the dead-lettered request.
func TestFindRequestOverRemote(t *testing.T) {
	clock, c := requestFixture(t, 2, true)
	eng := c.(*engine.Engine)
	rc := serveRemote(t, eng, clock)
	h := newHarness(t, rc, clock, Options{Entity: "payments"}, 100, 30)
	h.keys("j", "j", "O")
	d := h.m.detail
	if h.m.entity != "orders" || h.m.focus != 4 || d == nil || d.msg.MessageID != "req-1" {
		t.Fatalf("not on the request: entity %s focus %d detail %+v (info %q, err %v)", h.m.entity, h.m.focus, d, h.m.bar.info, h.m.bar.err)
	}
	if want := `request "req-1": orders › Dead-lettered › 3, found among 3 messages (esc goes back)`; h.m.bar.info != want {
		t.Fatalf("info %q, want %q", h.m.bar.info, want)
	}
	h.key("esc")
	if h.m.entity != "payments" || h.m.detail != nil {
		t.Fatalf("esc: %s %v", h.m.entity, h.m.detail)
	}
	h.key("k")
	h.key("O") // p-2: no CorrelationId
	h.wantErr("the message has no CorrelationId")
}
