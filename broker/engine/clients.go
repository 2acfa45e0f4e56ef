package engine

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/peeklock/peeklock/broker"
)

// listerSet holds the listeners in front of the engine that list their
// connections (broker.ClientLister). Its mutex is a leaf of the lock order.
type listerSet struct {
	mu   sync.Mutex
	list []broker.ClientLister
}

// AddClientLister registers a listener in front of the engine so that
// Clients lists its connections; the returned function removes it. The
// AMQP listener registers itself while it serves.
func (e *Engine) AddClientLister(l broker.ClientLister) (remove func()) {
	e.listers.add(l)
	return func() { e.listers.remove(l) }
}

// Clients lists the connections of every listener registered with
// AddClientLister (broker.ClientLister). With none it fails with
// CodeNotSupported: the engine alone has no clients to show.
func (e *Engine) Clients(ctx context.Context) ([]broker.ClientConn, error) {
	ls := e.listers.snapshot()
	if len(ls) == 0 {
		return nil, broker.Errorf(broker.CodeNotSupported, "no AMQP listener is open: start peeklock with --amqp to see its clients")
	}
	var out []broker.ClientConn
	for _, l := range ls {
		cs, err := l.Clients(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// CloseClient closes the connection id of whichever listener registered with
// AddClientLister has it (broker.ClientCloser). With no listener it fails
// with CodeNotSupported; when none has the connection, with CodeNotFound.
func (e *Engine) CloseClient(ctx context.Context, id, reason string) error {
	ls := e.listers.snapshot()
	if len(ls) == 0 {
		return broker.Errorf(broker.CodeNotSupported, "no AMQP listener is open: start peeklock with --amqp to see its clients")
	}
	for _, l := range ls {
		cl, ok := l.(broker.ClientCloser)
		if !ok {
			continue
		}
		err := cl.CloseClient(ctx, id, reason)
		if !errors.Is(err, broker.ErrNotFound) {
			return err
		}
	}
	return broker.Errorf(broker.CodeNotFound, "no open connection has the id %s (it may have closed already)", id)
}

func (s *listerSet) add(l broker.ClientLister) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, l)
}

func (s *listerSet) remove(l broker.ClientLister) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.list, l); i >= 0 {
		s.list = slices.Delete(s.list, i, i+1)
	}
}

func (s *listerSet) snapshot() []broker.ClientLister {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}
