package model

import (
	"strings"
	"sync"
	"testing"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
)

// reportingClient is a client whose connection state and notice the test
// sets, as a remote endpoint reports them.
type reportingClient struct {
	broker.Client
	mu            sync.Mutex
	state, notice string
}

func (r *reportingClient) set(state, notice string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state, r.notice = state, notice
}

func (r *reportingClient) State() string  { r.mu.Lock(); defer r.mu.Unlock(); return r.state }
func (r *reportingClient) Notice() string { r.mu.Lock(); defer r.mu.Unlock(); return r.notice }

// The status bar shows what a remote endpoint reports: a reconnecting
// connection and a lasting notice; it goes back to connected after.
func TestStatusBarShowsEndpointStateAndNotice(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	c := &reportingClient{Client: newEngine(t, clock, broker.Entity{Path: "q"})}
	c.set("reconnecting (attempt 3)", "entities are not listed: the credential lacks Manage rights")
	h := newHarness(t, c, clock, Options{Entity: "q"}, 160, 30)
	h.refresh()
	s := h.screen()
	if !strings.Contains(s, "reconnecting (attempt 3)") || !strings.Contains(s, "the credential lacks Manage rights") {
		t.Fatalf("status bar does not show the endpoint's state and notice:\n%s", s)
	}
	c.set("connected", "")
	h.refresh()
	s = h.screen()
	if strings.Contains(s, "reconnecting") || strings.Contains(s, "Manage rights") || !strings.Contains(s, "● connected") {
		t.Fatalf("status bar still shows the old state:\n%s", s)
	}
	// A read-only wrapper passes the state through.
	c.set("reconnecting (attempt 1)", "")
	if state, _ := broker.StatusOf(broker.ReadOnly(c)); state != "reconnecting (attempt 1)" {
		t.Fatalf("ReadOnly hides the state: %q", state)
	}
}
