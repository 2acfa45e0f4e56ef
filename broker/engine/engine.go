package engine

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// Lock order (nats-server keeps the same list in locksordering.txt):
//
//  1. Engine.life   (RWMutex, read-held for the whole of every public operation;
//     Close takes it for writing to wait for operations in flight)
//  2. Engine.mu     (RWMutex over the entity maps and each topic's subscription list)
//  3. entity.mu     (one per entity). One path holds several: a topic send
//     (fanOutStored) holds the topic and all its subscriptions, taken in
//     ascending entity id (lockAll), and takes no other mutex of this level
//     while it holds them. Every other path holds one entity mutex at a time:
//     forwarding (to ForwardTo, and of dead-lettered messages through the
//     outbox) happens after every source mutex is released (unlockAll).
//  4. leaves, each taken alone and never while holding another leaf:
//     sweeper.mu, flushes.mu, Engine.ownersMu, listerSet.mu, hub.mu then subscriber.mu, and the store's
//     own mutexes (Store.Apply and Store.Get are called under entity.mu, and
//     so is Store.Bodies for a receive-and-delete, which reads its messages
//     before it deletes them; see takeAndDelete).
//
// Engine.mu is never taken while an entity mutex is held. Store.Pending.Wait
// is never called while holding any engine mutex.
//
// Every mutex is released by a deferred call, so that a panic inside a
// locked section (the listener recovers panics and keeps serving) leaves
// no entity hung: an entity mutex is taken through withLocked or withDue
// (or, where a deleted entity's waiter must still go, en.mu.Lock followed
// at once by defer release), and the topic fan-out's through fanOutStored (lockAll,
// defer releaseAll). release and releaseAll drop the store changes a
// panicking section left in the batch. Work that must not run under the
// mutex (waiting for the disk, forwarding, reading the bodies of peek-lock
// hand-outs and of browsed windows) runs in the caller after the locked
// helper returns.

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
	// NoHistory turns the message histories off (see History): nothing is
	// recorded, and History fails with CodeNotSupported.
	NoHistory bool
	// HistoryLimit is how many events of each message's history are kept
	// (older ones are folded into a count); 0 means DefaultHistoryLimit.
	HistoryLimit int
}

// Engine is a handle on the embedded broker, which names who calls through
// it for the message histories (see As). It implements broker.Client; every
// method is safe for concurrent use.
type Engine struct {
	*core
	// actor names, in the histories of the messages this handle's calls
	// touch, who makes them: broker.ActorDashboard for the handle New
	// returns.
	actor string
}

// core is the broker itself, which every handle of it shares.
type core struct {
	store store.Store
	clock clockwork.Clock
	// preciseWake says that clock is the real clock, on which the sweeper
	// corrects the runtime's timer slack (see timerSlack).
	preciseWake bool
	log         *slog.Logger
	ns          string
	// histLimit bounds each message's history; 0: histories are off.
	histLimit int
	started   int64 // unix ns when the engine opened

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
	msgIDs  messageIDs
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
	e := &Engine{actor: broker.ActorDashboard, core: &core{
		store:    opts.Store,
		clock:    opts.Clock,
		log:      opts.Logger,
		ns:       opts.Namespace,
		done:     make(chan struct{}),
		entities: make(map[string]*entity),
		nextID:   1,
		owners:   make(map[uint64]map[*entity]struct{}),
	}}
	if e.store == nil {
		e.store = store.NewMemory()
	}
	if e.clock == nil {
		e.clock = clockwork.NewRealClock()
	}
	e.preciseWake = reflect.TypeOf(e.clock) == reflect.TypeOf(clockwork.NewRealClock())
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if e.ns == "" {
		e.ns = DefaultNamespace
	}
	if !opts.NoHistory {
		e.histLimit = cmp.Or(min(opts.HistoryLimit, histMax/2), DefaultHistoryLimit)
	}
	e.started = e.now()
	e.events.buffer = opts.EventBuffer
	if e.events.buffer <= 0 {
		e.events.buffer = DefaultEventBuffer
	}
	e.sweep.init()
	e.msgIDs.init()
	if err := e.load(); err != nil {
		return nil, err
	}
	e.wg.Add(1)
	go e.sweepLoop()
	return e, nil
}

// As returns a handle on the same engine whose calls the message histories
// record as made by actor, a short description of who calls ("" means the
// dashboard): the listener makes one for each link, naming its connection,
// container and link; the SSH server one for each session. Handles share
// everything else, Close included.
func (e *Engine) As(actor string) *Engine {
	return &Engine{core: e.core, actor: cmp.Or(actor, broker.ActorDashboard)}
}

// ActingAs is As for broker.ActingAs.
func (e *Engine) ActingAs(actor string) broker.Client { return e.As(actor) }

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
	e.flushAllRiders()
	e.events.closeAll()
	if err := e.store.Close(); err != nil {
		return storeErr("close the store", "", err)
	}
	return nil
}

// flushAllRiders stores the history events still held back (see
// historyLog.held), as the engine closes.
func (e *Engine) flushAllRiders() {
	for _, en := range e.entityList() {
		_ = e.withLocked(en, func() error { // a deleted entity has none
			en.flushRiders()
			return nil
		})
	}
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

// begin is the prologue of a public method: the engine is entered (the
// caller defers e.leave when begin succeeds) and ctx is not done yet.
func (e *Engine) begin(ctx context.Context) error {
	if err := e.enter(); err != nil {
		return err
	}
	if err := checkCtx(ctx); err != nil {
		e.leave()
		return err
	}
	return nil
}

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
	en := e.entityAt(pathKey(path))
	if en == nil {
		return nil, sub, errNotFound(path)
	}
	return en, sub, nil
}

// entityAt returns the entity whose path key is key, or nil.
func (e *Engine) entityAt(key string) *entity {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.entities[key]
}

// subscriptions returns a snapshot of topic t's subscriptions.
func (e *Engine) subscriptions(t *entity) []*entity {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return slices.Clone(t.subs)
}

// withSubscriptions returns a snapshot of topic t and its subscriptions.
func (e *Engine) withSubscriptions(t *entity) []*entity {
	e.mu.RLock()
	defer e.mu.RUnlock()
	list := make([]*entity, 0, len(t.subs)+1)
	return append(append(list, t), t.subs...)
}

// lockEntity locks en and reports ErrNotFound when it was deleted meanwhile.
// On success the caller holds en.mu and must defer e.release(en).
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

// release is unlock for a defer statement, the one way an entity mutex is
// released: on every path, a panic included. When the locked section
// panicked, the store changes it had added to en's batch are dropped (they
// describe a change that did not finish), the mutex is released as unlock
// does, and the panic goes on: the listener recovers it and keeps serving,
// and the entity must go on serving too.
func (e *Engine) release(en *entity) {
	if r := recover(); r != nil {
		en.resetBatch()
		e.unlock(en)
		panic(r)
	}
	e.unlock(en)
}

// withLocked runs fn with en locked (ErrNotFound when it was deleted
// meanwhile) and releases the mutex on every path (release).
func (e *Engine) withLocked(en *entity, fn func() error) error {
	if err := e.lockEntity(en); err != nil {
		return err
	}
	defer e.release(en)
	return fn()
}

// withDue is withLocked that first processes what is due at now, the time fn
// gets.
func (e *Engine) withDue(en *entity, fn func(now int64) error) error {
	if err := e.lockEntity(en); err != nil {
		return err
	}
	defer e.release(en)
	now := e.now()
	en.processDue(now)
	return fn(now)
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
		_ = e.withDue(en, func(now int64) error {
			if d := en.idleDeadline(); d != 0 && d <= now {
				idle = append(idle, en)
			}
			return nil
		})
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
