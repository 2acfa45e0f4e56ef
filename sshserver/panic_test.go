package sshserver

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peeklock/peeklock/model"
)

// TestPanicInASessionEndsOnlyThatSession: a panic in a session's handler
// (here the dashboard options of its role) is logged and ends that session;
// the server, its session count and the other sessions go on.
func TestPanicInASessionEndsOnlyThatSession(t *testing.T) {
	ts := newTestServer(t, newEngine(t, 1), func(c *Config) { c.MaxSessions = 1 })
	var boom atomic.Bool
	ts.optsOf = func(Role) model.Options {
		if boom.Load() {
			panic("options of the role failed")
		}
		return ts.opts
	}
	ts.start()
	boom.Store(true)
	first := openTerm(t, ts.mustDial(ts.operator), 80, 24)
	select {
	case <-first.exit:
	case <-time.After(waitLong):
		t.Fatal("the session whose handler panicked did not end")
	}
	waitUntil(t, waitLong, "the panic in the log", func() bool {
		return strings.Contains(ts.log.String(), "panicked") && strings.Contains(ts.log.String(), "options of the role failed")
	})
	boom.Store(false)
	// The slot it held came back (MaxSessions is 1), and the server serves.
	second := openTerm(t, ts.mustDial(ts.operator), 80, 24)
	second.waitScreen(waitLong, "m-1")
}
