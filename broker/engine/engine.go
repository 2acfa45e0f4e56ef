package engine

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// Lock order (write it down the day a second mutex appears):
//
//  1. Engine.life   (RWMutex, read-held for the whole of every public operation;
//     Close takes it for writing to wait for operations in flight)
//  2. Engine.mu     (RWMutex over the entity maps and each topic's subscription list)
//  3. entity.mu     (one per entity). One path holds several: a topic send
//     (sendTopic) holds the topic and all its subscriptions, taken in
//     ascending entity id (lockAll), and takes no other mutex of this level
//     while it holds them. Every other path holds one entity mutex at a time:
//     forwarding (to ForwardTo, and of dead-lettered messages through the
//     outbox) happens after every source mutex is released (unlockAll).
//  4. leaves, each taken alone and never while holding another leaf:
//     sweeper.mu, flushes.mu, Engine.ownersMu, listerSet.mu, hub.mu then subscriber.mu, and the store's
//     own mutexes (Store.Apply, Store.Get and Store.Bodies are called under
//     entity.mu).
//
// Engine.mu is never taken while an entity mutex is held. Store.Pending.Wait
// is never called while holding any engine mutex.

// DefaultNamespace is the namespace name the engine reports when Options
// names none; it is the Service Bus emulator's.
const DefaultNamespace = "sbemulatorns"

// DefaultEventBuffer is the channel size of an event subscriber when
// Options.EventBuffer is zero.
const DefaultEventBuffer = 1024

// Options configure an Engine. The zero value is a usable in-memory engine on
// the real clock.
type Options struct {
	// Store keeps entities and messages; nil means store.NewMemory(). The
	// engine closes it in Close.
	Store store.Store
	// Clock is the source of all time; nil means the real clock.
	Clock clockwork.Clock
	// Logger receives the engine's log; nil discards it.
	Logger *slog.Logger
	// EventBuffer is each event subscriber's channel size; 0 means
	// DefaultEventBuffer.
	EventBuffer int
	// Namespace is the namespace name shown by Endpoint; "" means
	// DefaultNamespace.
	Namespace string
}

// Engine is the embedded broker. It implements broker.Client; every method is
// safe for concurrent use.
type Engine struct {
	store store.Store
	clock clockwork.Clock
	log   *slog.Logger
	ns    string

	life   sync.RWMutex
	closed atomic.Bool
	done   chan struct{}

	mu       sync.RWMutex
	entities map[string]*entity // by lower-case path
	nextID   uint32

	ownersMu sync.Mutex
	owners   map[uint64]map[*entity]struct{}

	events  hub
	sweep   sweeper
	listers listerSet
	flushes flushes
	wg      sync.WaitGroup
}

var (
	_ broker.Client       = (*Engine)(nil)
	_ broker.ClientLister = (*Engine)(nil)
)

// New opens an engine over opts.Store: it loads the stored entities and
// messages, rebuilds the indexes (formerly locked messages are available
// again, their hand-outs already counted), and starts the sweeper.
func New(opts Options) (*Engine, error) {
	e := &Engine{
		store:    opts.Store,
		clock:    opts.Clock,
		log:      opts.Logger,
		ns:       opts.Namespace,
		done:     make(chan struct{}),
		entities: make(map[string]*entity),
		nextID:   1,
		owners:   make(map[uint64]map[*entity]struct{}),
	}
	if e.store == nil {
		e.store = store.NewMemory()
	}
	if e.clock == nil {
		e.clock = clockwork.NewRealClock()
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if e.ns == "" {
		e.ns = DefaultNamespace
	}
	e.events.buffer = opts.EventBuffer
	if e.events.buffer <= 0 {
		e.events.buffer = DefaultEventBuffer
	}
	e.sweep.init()
	if err := e.load(); err != nil {
		return nil, err
	}
	e.wg.Add(1)
	go e.sweepLoop()
	return e, nil
}

// Close stops the sweeper, wakes every waiting receive (it returns
// broker.ErrClosed), waits for operations in flight, ends every event
// subscription and closes the store. Locks are not stored, so they are gone.
func (e *Engine) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	close(e.done)
	e.wg.Wait()
	e.life.Lock()
	defer e.life.Unlock()
	e.events.closeAll()
	if err := e.store.Close(); err != nil {
		return storeErr("close the store", "", err)
	}
	return nil
}

// enter starts a public operation; leave must follow. Internal code never
// calls enter again (a read lock taken twice can deadlock against Close).
func (e *Engine) enter() error {
	if e.closed.Load() {
		return errClosed()
	}
	e.life.RLock()
	if e.closed.Load() {
		e.life.RUnlock()
		return errClosed()
	}
	return nil
}

func (e *Engine) leave() { e.life.RUnlock() }

// Endpoint describes the engine for the status bar.
func (e *Engine) Endpoint() string { return "embedded broker, namespace " + e.ns }

// Namespace returns the namespace name.
func (e *Engine) Namespace() string { return e.ns }

// Capabilities reports that the engine can do everything.
func (e *Engine) Capabilities() broker.Capabilities {
	return broker.Capabilities{Has: broker.AllCapabilities}
}

// Clock returns the engine's clock.
func (e *Engine) Clock() clockwork.Clock { return e.clock }

// now returns the clock's time in unix nanoseconds.
func (e *Engine) now() int64 { return e.clock.Now().UnixNano() }

// lookup finds the entity of an address and its sub-queue.
func (e *Engine) lookup(addr string) (*entity, broker.SubQueue, error) {
	path, sub := broker.SplitAddress(addr)
	e.mu.RLock()
	en := e.entities[pathKey(path)]
	e.mu.RUnlock()
	if en == nil {
		return nil, sub, errNotFound(path)
	}
	return en, sub, nil
}

// lockEntity locks en and reports ErrNotFound when it was deleted meanwhile.
// On success the caller holds en.mu and must call e.unlock(en).
func (e *Engine) lockEntity(en *entity) error {
	en.mu.Lock()
	if en.deleted {
		en.mu.Unlock()
		return errNotFound(en.path)
	}
	return nil
}

// unlock schedules the entity's next deadline with the sweeper, releases its
// mutex, and then forwards what dead-lettering queued for another entity.
func (e *Engine) unlock(en *entity) {
	en.scheduleNext()
	out := en.outbox
	en.outbox = nil
	if len(out) > 0 {
		e.flushes.begin() // before the mutex goes: Tick sees it
	}
	en.mu.Unlock()
	if len(out) > 0 {
		e.flushOutbox(en, out)
		e.flushes.end()
	}
}

// lockedDue locks en (ErrNotFound when deleted) and processes what is due.
func (e *Engine) lockedDue(en *entity) (int64, error) {
	if err := e.lockEntity(en); err != nil {
		return 0, err
	}
	now := e.now()
	en.processDue(now)
	return now, nil
}

// Tick processes everything due at Clock.Now() in every entity now: expired
// locks, scheduled messages, expired messages, entities idle for their
// AutoDeleteOnIdle. Tests that Advance a fake clock call it (or any
// operation) to make the effects visible at once.
//
// Tick returns once what it processed, and what the sweeper goroutine
// processed before it, is forwarded too: dead-lettered messages leave their
// entity under its mutex and reach ForwardDeadLetteredMessagesTo after it
// (flushOutbox), and a test must not see the first step without the second.
func (e *Engine) Tick() {
	if e.enter() != nil {
		return
	}
	var idle []*entity
	for _, en := range e.entityList() {
		now, err := e.lockedDue(en)
		if err != nil {
			continue
		}
		if d := en.idleDeadline(); d != 0 && d <= now {
			idle = append(idle, en)
		}
		e.unlock(en)
	}
	e.deleteIdle(idle)
	e.leave()
	e.flushes.wait()
}

// entityList returns a snapshot of every entity.
func (e *Engine) entityList() []*entity {
	e.mu.RLock()
	defer e.mu.RUnlock()
	list := make([]*entity, 0, len(e.entities))
	for _, en := range e.entities {
		list = append(list, en)
	}
	return list
}

// checkCtx returns ctx's error as a broker error, or nil.
func checkCtx(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return ctxErr(err)
	}
	return nil
}
