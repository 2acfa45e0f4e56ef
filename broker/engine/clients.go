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
	e.listers.mu.Lock()
	e.listers.list = append(e.listers.list, l)
	e.listers.mu.Unlock()
	return func() {
		e.listers.mu.Lock()
		if i := slices.Index(e.listers.list, l); i >= 0 {
			e.listers.list = slices.Delete(e.listers.list, i, i+1)
		}
		e.listers.mu.Unlock()
	}
}

// Clients lists the connections of every listener registered with
// AddClientLister (broker.ClientLister). With none it fails with
// CodeNotSupported: the engine alone has no clients to show.
func (e *Engine) Clients(ctx context.Context) ([]broker.ClientConn, error) {
	e.listers.mu.Lock()
	ls := slices.Clone(e.listers.list)
	e.listers.mu.Unlock()
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
	e.listers.mu.Lock()
	ls := slices.Clone(e.listers.list)
	e.listers.mu.Unlock()
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
