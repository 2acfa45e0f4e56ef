package amqpserver

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// faultyReads is a store whose message reads (Bodies) fail while fail is
// set, and wait, once stall was called, until resume (stalledRead is
// closed when a read first waits); everything else works.
type faultyReads struct {
	store.Store
	fail        atomic.Bool
	mu          sync.Mutex
	gate        chan struct{} // nil: reads go through
	stalledRead chan struct{}
}

func (s *faultyReads) stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate, s.stalledRead = make(chan struct{}), make(chan struct{})
}

func (s *faultyReads) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate != nil {
		close(s.gate)
		s.gate = nil
	}
}

func (s *faultyReads) Bodies(locs []store.Loc, out []*broker.Message) error {
	s.mu.Lock()
	gate := s.gate
	if gate != nil {
		select {
		case <-s.stalledRead:
		default:
			close(s.stalledRead) // under mu: closed once
		}
	}
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if s.fail.Load() {
		return errors.New("injected read failure")
	}
	return s.Store.Bodies(locs, out)
}
