package model

import (
	"context"
	"errors"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
)

// TestCloseEndsCallsInFlight: every call to the client runs under the
// model's context, so a command made before Close (a lock renewal here)
// ends with the context's cancellation once Close has run, instead of
// running on for its whole timeout after the dashboard is gone.
func TestCloseEndsCallsInFlight(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	eng := newEngine(t, clock, broker.Entity{Path: "orders"})
	m := New(eng, Options{Clock: clock, Entity: "orders"})
	renew := m.renewCmd(heldKey{address: "orders", seq: 1}, &heldLock{msg: &broker.Message{SequenceNumber: 1}}, false)
	m.Close()
	got, ok := renew().(renewedMsg)
	if !ok || !errors.Is(got.err, context.Canceled) {
		t.Fatalf("renewal after Close = %#v; want the context's cancellation", got)
	}
}
