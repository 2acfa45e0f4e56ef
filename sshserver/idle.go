package sshserver

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// idleInput passes a session's input through and notes when the last byte
// arrived.
type idleInput struct {
	r     io.Reader
	clock clockwork.Clock
	last  atomic.Int64 // unix nanoseconds of the last input (or of the start)
}

func newIdleInput(r io.Reader, clock clockwork.Clock) *idleInput {
	in := &idleInput{r: r, clock: clock}
	in.last.Store(clock.Now().UnixNano())
	return in
}

// Read reads from the session.
func (in *idleInput) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	if n > 0 {
		in.last.Store(in.clock.Now().UnixNano())
	}
	return n, err
}

// idleFor returns how long there has been no input.
func (in *idleInput) idleFor() time.Duration {
	return in.clock.Since(time.Unix(0, in.last.Load()))
}

// watch calls onIdle once there has been no input for timeout, unless ctx
// ends first.
func (in *idleInput) watch(ctx context.Context, timeout time.Duration, onIdle func()) {
	wait := timeout
	for {
		t := in.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.Chan():
		}
		idle := in.idleFor()
		if idle >= timeout {
			onIdle()
			return
		}
		wait = timeout - idle
	}
}
