package engine

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// Receive hands over messages as the engine's own client (owner 0); see
// ReceiveAs.
func (e *Engine) Receive(ctx context.Context, req broker.ReceiveRequest) ([]*broker.Message, error) {
	return e.ReceiveAs(ctx, 0, req)
}

// ReceiveAs hands over up to req.Max available messages of an entity or of
// one of its sub-queues (req.SubQueue, or the address's suffix), in sequence
// order, under owner. In PeekLock mode each
// gets an exclusive lock (a random LockToken, LockedUntil = now +
// LockDuration); a hand-out is not a failed delivery, so it changes no
// DeliveryCount (see release). In ReceiveAndDelete mode they are removed. With req.MaxWait > 0 it waits (and
// honours ctx) until at least one message is available or the wait ends,
// returning an empty result then. A topic, and the main queue of a
// session-aware entity (use AcceptSession and ReceiveSession), are refused
// with CodeInvalid.
//
// The returned messages are copies (see ReceiveDeliveries for none) that
// share Body and ApplicationProperties with the store: treat them as
// read-only (Clone before changing).
func (e *Engine) ReceiveAs(ctx context.Context, owner uint64, req broker.ReceiveRequest) ([]*broker.Message, error) {
	return copiesOf(func(sc *scratch, dst []broker.Delivery) ([]broker.Delivery, error) {
		return e.receiveAs(ctx, sc, owner, req, dst)
	})
}

// ReceiveDeliveries is ReceiveAs without copies: it appends the deliveries
// to dst and returns it, each holding the stored message itself (read-only:
// see broker.Delivery) with its delivery's own fields. The listener
// delivers this way, reusing dst.
func (e *Engine) ReceiveDeliveries(ctx context.Context, owner uint64, req broker.ReceiveRequest, dst []broker.Delivery) ([]broker.Delivery, error) {
	sc := scratchPool.Get().(*scratch)
	defer sc.put()
	return e.receiveAs(ctx, sc, owner, req, dst)
}

// receiveAs is ReceiveDeliveries with the scratch sc.
func (e *Engine) receiveAs(ctx context.Context, sc *scratch, owner uint64, req broker.ReceiveRequest, dst []broker.Delivery) ([]broker.Delivery, error) {
	if err := e.enter(); err != nil {
		return dst, err
	}
	defer e.leave()
	en, sub, err := e.receivable(req)
	if err != nil {
		return dst, err
	}
	if sub == broker.SubQueueMain && en.requiresSession() {
		return dst, newErr(broker.CodeInvalid, en.path, "the entity requires sessions: accept a session and receive from it")
	}
	return e.receive(ctx, sc, en, owner, req, sub, nil, dst)
}

// receivable checks a receive request and finds its entity.
func (e *Engine) receivable(req broker.ReceiveRequest) (*entity, broker.SubQueue, error) {
	en, sub, err := e.lookup(req.Entity)
	if err != nil {
		return nil, sub, err
	}
	switch {
	case req.SubQueue > broker.SubQueueTransferDeadLetter:
		return nil, sub, newErr(broker.CodeInvalid, en.path, "unknown sub-queue %d", req.SubQueue)
	case req.SubQueue == broker.SubQueueMain:
	case sub == broker.SubQueueMain:
		sub = req.SubQueue
	case sub != req.SubQueue:
		return nil, sub, newErr(broker.CodeInvalid, en.path, "the address %q names the %s but the request asks for the %s", req.Entity, sub, req.SubQueue)
	}
	if en.kind == broker.KindTopic {
		return nil, sub, newErr(broker.CodeInvalid, en.path, "messages cannot be received from a topic; receive from one of its subscriptions")
	}
	if req.Max <= 0 {
		return nil, sub, newErr(broker.CodeInvalid, en.path, "a receive asks for at least one message (Max is %d)", req.Max)
	}
	if req.Mode != broker.PeekLock && req.Mode != broker.ReceiveAndDelete {
		return nil, sub, newErr(broker.CodeInvalid, en.path, "unknown receive mode %d", req.Mode)
	}
	if req.MaxWait < 0 {
		return nil, sub, newErr(broker.CodeInvalid, en.path, "MaxWait %v is negative", req.MaxWait)
	}
	return en, sub, nil
}

func (en *entity) requiresSession() bool {
	en.mu.Lock()
	defer en.mu.Unlock()
	return en.settings.RequiresSession
}

// taken is what one look into an entity by receive found: the messages
// (ds in ReceiveAndDelete mode, hs in PeekLock mode), or, when there were
// none to wait for, the waiter w added to list (of session s, or nil).
type taken struct {
	ds   []broker.Delivery
	hs   []handout
	w    *waiter
	list *waitList
	s    *session
}

// take is one look of receive under en's mutex: it takes what is
// available and commits, or, when nothing is and req waits, adds a waiter.
// The locks it takes are taken as o says (see lock), their hand-outs
// appended to hs; the messages it removes are appended to ds.
func (en *entity) take(owner uint64, req broker.ReceiveRequest, sub broker.SubQueue, sessionID *string, now int64, o origin, hs []handout, ds []broker.Delivery) (taken, error) {
	if err := en.receiveRefused(); err != nil {
		return taken{}, err
	}
	en.touch(now)
	src := en.q[sub].active
	list := &en.waiters[sub]
	var s *session
	if sessionID != nil {
		s = en.sessions[*sessionID]
		if s == nil || !s.isLocked() || s.owner != owner {
			return taken{}, errSessionLockLost(en.path, *sessionID)
		}
		src, list = s.active, &s.waiters
	}
	if req.Mode == broker.ReceiveAndDelete {
		n := len(ds)
		ds, err := en.takeAndDelete(src, req.Max, now, ds)
		if err != nil {
			en.commitQuiet() // what expired on the way
			return taken{}, err
		}
		if len(ds) > n || req.MaxWait == 0 {
			_, err := en.commit()
			return taken{ds: ds}, err
		}
	} else {
		hs := en.takeLocked(src, req.Max, owner, now, o, hs)
		if len(hs) > 0 || req.MaxWait == 0 {
			if _, err := en.commit(); err != nil {
				return taken{}, err
			}
			return taken{hs: hs}, nil
		}
	}
	en.commitQuiet()
	return taken{w: list.add(), list: list, s: s}, nil
}

// receive takes messages from the sub-queue, or from session s (by id) when
// sessionID is non-nil, waiting up to req.MaxWait for the first, and
// appends their deliveries to dst. sc is the receive's scratch.
func (e *Engine) receive(ctx context.Context, sc *scratch, en *entity, owner uint64, req broker.ReceiveRequest, sub broker.SubQueue, sessionID *string, dst []broker.Delivery) ([]broker.Delivery, error) {
	var dt deadlineTimer
	defer func() {
		if dt.stop != nil {
			dt.stop()
		}
	}()
	for {
		if err := checkCtx(ctx); err != nil {
			return dst, err
		}
		var t taken
		if err := e.withDue(en, func(now int64) (err error) {
			t, err = en.take(owner, req, sub, sessionID, now, e.by(""), sc.hs[:0], dst)
			if err == nil && t.w != nil && dt.c == nil {
				dt = e.newDeadline(req.MaxWait)
			}
			return err
		}); err != nil {
			return dst, err
		}
		switch {
		case t.w == nil && req.Mode == broker.ReceiveAndDelete:
			return t.ds, nil
		case t.w == nil:
			sc.hs = t.hs
			return e.deliveries(sc, en, t.hs, dst)
		}
		// Nothing available: wait for a wake-up, the deadline, ctx or Close.
		list, s, w := t.list, t.s, t.w
		r := e.block(ctx, w, dt, func() {
			en.mu.Lock() // deleted or not: the waiter goes
			defer e.release(en)
			if !list.remove(w) {
				list.wake(1) // pass the wake-up on
			}
			if s != nil {
				en.maybeDropSession(s)
			}
		})
		switch r {
		case waitTimeout:
			return dst, nil
		case waitCancelled:
			return dst, ctxErr(ctx.Err())
		case waitClosed:
			return dst, errClosed()
		}
	}
}

// handout is what a hand-out needs to build the message outside the mutex.
type handout struct {
	loc      store.Loc
	token    broker.LockToken
	until    int64
	delivery uint32 // the DeliveryCount clients see
	state    broker.State
	// peek: a browse, which reports the current state (see handOutState).
	peek bool
}

// takeLocked locks up to max messages from src (a tree of available
// messages) for owner, and appends their hand-outs to hs. Locks are
// volatile, so a hand-out writes nothing to the store.
func (en *entity) takeLocked(src *seqSet, max int, owner uint64, now int64, o origin, hs []handout) []handout {
	hs = slices.Grow(hs, min(max, src.Len()))
	for n := len(hs) + max; len(hs) < n; {
		x, ok := src.Min()
		if !ok {
			break
		}
		if x.sub == broker.SubQueueMain && x.expires != 0 && x.expires <= now {
			en.unindex(x)
			en.expire(x) // never deliver an expired message
			continue
		}
		hs = append(hs, en.lock(x, owner, now, o))
	}
	return hs
}

// lock puts an available (or deferred) message under a new lock: until now
// + LockDuration, or, taken through a session, until the session lock's
// expiry (see coveredBySession). x's history says who locked it and how, as
// o says.
func (en *entity) lock(x *entry, owner uint64, now int64, o origin) handout {
	en.unindex(x)
	x.token = en.lockToken(x)
	x.owner = owner
	x.at = en.lockUntil(x, now)
	en.index(x)
	en.noteOwner(owner)
	en.emit(broker.EventLocked, x, "")
	if en.hist.rider(x, broker.EventLocked, now, x.at, o) {
		en.flushRiders()
	}
	return handout{loc: x.loc(en.id), token: x.token, until: x.at, delivery: x.deliveryCount(), state: x.state}
}

// lockExpiry is now+d, saturating (a lock never wraps into the past).
func lockExpiry(now int64, d time.Duration) int64 {
	if int64(d) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(d)
}

// takeAndDelete removes up to max messages from src and appends their
// deliveries to ds (ReceiveAndDelete). Their bodies are read under the
// mutex, before the delete is applied; when the store cannot read them,
// nothing is deleted and the error is returned.
func (en *entity) takeAndDelete(src *seqSet, max int, now int64, ds []broker.Delivery) ([]broker.Delivery, error) {
	var taken []*entry
	for len(taken) < max {
		x, ok := src.Min()
		if !ok {
			break
		}
		en.unindex(x)
		if x.sub == broker.SubQueueMain && x.expires != 0 && x.expires <= now {
			en.expire(x)
			continue
		}
		taken = append(taken, x)
	}
	if len(taken) == 0 {
		return ds, nil
	}
	locs := make([]store.Loc, len(taken))
	for i, x := range taken {
		locs[i] = x.loc(en.id)
	}
	stored := make([]*broker.Message, len(taken))
	if err := en.eng.store.Bodies(locs, stored); err != nil {
		// Nothing is deleted that could not be read: the messages stay.
		en.eng.log.Error("reading messages failed", "entity", en.path, "err", err)
		for _, x := range taken {
			en.index(x)
		}
		return ds, storeErr("reading the messages failed", en.path, err)
	}
	for i, x := range taken {
		en.forget(x)
		en.batch.DeleteMessage(locs[i])
		msg := stored[i]
		if msg == nil {
			en.eng.log.Error("stored message missing", "entity", en.path, "seq", x.seq)
			continue
		}
		ds = append(ds, broker.Delivery{
			Msg:            msg,
			SequenceNumber: x.seq,
			DeliveryCount:  x.deliveryCount(),
			State:          handOutState(msg.State, x.state),
			SubQueue:       x.sub,
		})
		en.emit(broker.EventReceived, x, "")
	}
	return ds, nil
}

// bodies reads the hand-outs' messages of en from the store and returns
// copies of them with their locks set (see deliveries).
func (e *Engine) bodies(en *entity, hs []handout) ([]*broker.Message, error) {
	return copiesOf(func(sc *scratch, dst []broker.Delivery) ([]broker.Delivery, error) {
		return e.deliveries(sc, en, hs, dst)
	})
}

// copiesOf runs deliver with a scratch from the pool, appending to the
// scratch's own deliveries, and returns copies of the messages it
// delivered (copyMessages): the broker.Client API's form of a receive.
func copiesOf(deliver func(sc *scratch, dst []broker.Delivery) ([]broker.Delivery, error)) ([]*broker.Message, error) {
	sc := scratchPool.Get().(*scratch)
	defer sc.put()
	var err error
	sc.ds, err = deliver(sc, sc.ds[:0])
	return copyMessages(sc.ds), err
}

// deliveries reads the hand-outs' messages of en from the store and appends
// their deliveries, locks set, to dst; sc holds the receive's scratch. A
// message settled or purged meanwhile is left out. When the store cannot
// read them, the error is the caller's to return, and the locks the
// hand-outs took are given back (giveBack): nothing was delivered.
func (e *Engine) deliveries(sc *scratch, en *entity, hs []handout, dst []broker.Delivery) ([]broker.Delivery, error) {
	locs := sc.locs[:0]
	for i := range hs {
		locs = append(locs, hs[i].loc)
	}
	sc.locs = locs
	stored := slices.Grow(sc.stored[:0], len(hs))[:len(hs)]
	sc.stored = stored
	if err := e.store.Bodies(locs, stored); err != nil {
		e.log.Error("reading messages failed", "entity", en.path, "err", err)
		e.giveBack(en, hs, "reading the message from the store failed")
		return dst, storeErr("reading the messages failed", en.path, err)
	}
	dst = slices.Grow(dst, len(hs))
	for i, msg := range stored {
		if msg == nil {
			continue
		}
		h := &hs[i]
		d := broker.Delivery{
			Msg:            msg,
			SequenceNumber: h.loc.Seq,
			DeliveryCount:  h.delivery,
			State:          h.state,
			SubQueue:       h.loc.Sub,
			LockToken:      h.token,
		}
		if !h.peek {
			d.State = handOutState(msg.State, h.state)
		}
		if h.until != 0 {
			d.LockedUntil = time.Unix(0, h.until).UTC()
		}
		dst = append(dst, d)
	}
	return dst, nil
}

// copyMessages returns copies of the deliveries' messages with the
// deliveries' fields set: what the broker.Client API hands out. The copies
// share allocations of up to copySlab messages: a batch's messages are
// made, handed out and dropped together, and one slab costs the allocator
// (and the collector's bookkeeping) once instead of once per message. The
// bound keeps what one message kept from a large browse holds on to small.
func copyMessages(ds []broker.Delivery) []*broker.Message {
	if len(ds) == 0 {
		return nil
	}
	out := make([]*broker.Message, len(ds))
	var copies []broker.Message
	for i := range ds {
		if len(copies) == 0 {
			copies = make([]broker.Message, min(copySlab, len(ds)-i))
		}
		ds[i].CopyTo(&copies[0])
		out[i] = &copies[0]
		copies = copies[1:]
	}
	return out
}

// copySlab is the most message copies copyMessages allocates at once: a
// receive's whole batch (maxReceiveBatch in the listener).
const copySlab = 64

// giveBack releases the locks that hand-outs hs took (a browse takes none)
// and still hold, as a released delivery that is not counted (see
// release): their messages could not be read, so nothing was delivered.
func (e *Engine) giveBack(en *entity, hs []handout, why string) {
	_ = e.withLocked(en, func() error { // a deleted entity has nothing to give back
		now := e.now()
		for _, h := range hs {
			if x := en.lockedBy(h.token); x != nil {
				en.release(x, now, broker.EventReleased, why, nil, broker.ActorBroker)
			}
		}
		en.commitQuiet()
		return nil
	})
}

// handOutState is the state a hand-out reports: the entry's (now), except
// that a message stored Scheduled (stored: the state its record was put
// with) reports Scheduled once active, as Service Bus's x-opt-message-state
// does; the JavaScript SDK's live tests expect "scheduled" on a received
// scheduled message. A peek reports the current state: the dashboard's
// remote client sorts peeked messages into categories by it.
func handOutState(stored, now broker.State) broker.State {
	if now == broker.StateActive && stored == broker.StateScheduled {
		return broker.StateScheduled
	}
	return now
}

// ReceiveDeferred locks deferred messages by sequence number as the engine's
// own client (owner 0); see ReceiveDeferredAs.
func (e *Engine) ReceiveDeferred(ctx context.Context, entity string, seqs []int64) ([]*broker.Message, error) {
	return e.ReceiveDeferredAs(ctx, 0, entity, seqs)
}

// ReceiveDeferredAs locks deferred messages of an entity (or of one of its
// sub-queues, by address suffix) by sequence number under owner.
// Every number must name a deferred message that is not locked; otherwise
// nothing is locked and the error is ErrMessageNotFound. The messages are
// then settled like any other. Their DeliveryCount shows the deferral that
// put them there (see entry.failed).
func (e *Engine) ReceiveDeferredAs(ctx context.Context, owner uint64, entity string, seqs []int64) ([]*broker.Message, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	en, sub, err := e.lookup(entity)
	if err != nil {
		return nil, err
	}
	if en.kind == broker.KindTopic {
		return nil, newErr(broker.CodeInvalid, en.path, "a topic has no deferred messages; use one of its subscriptions")
	}
	if sub == broker.SubQueueMain && en.requiresSession() {
		return nil, newErr(broker.CodeInvalid, en.path, "the entity requires sessions: receive deferred messages through the session (ReceiveSessionDeferred)")
	}
	return e.receiveDeferred(ctx, en, owner, sub, seqs, nil)
}

// receiveDeferred locks deferred messages; with sessionID set they must
// belong to that session, whose lock owner must hold.
func (e *Engine) receiveDeferred(ctx context.Context, en *entity, owner uint64, sub broker.SubQueue, seqs []int64, sessionID *string) ([]*broker.Message, error) {
	var hs []handout
	if err := e.withDue(en, func(now int64) (err error) {
		hs, err = en.receiveDeferred(owner, sub, seqs, sessionID, now, e.by("deferred message received by sequence number"))
		return err
	}); err != nil {
		return nil, err
	}
	return e.bodies(en, hs)
}

// receiveDeferred is Engine.receiveDeferred's work under en's mutex: all
// the messages locked and committed, or none, as o says.
func (en *entity) receiveDeferred(owner uint64, sub broker.SubQueue, seqs []int64, sessionID *string, now int64, o origin) ([]handout, error) {
	if err := en.receiveRefused(); err != nil {
		return nil, err
	}
	en.touch(now)
	if sessionID != nil {
		if s := en.sessions[*sessionID]; s == nil || !s.isLocked() || s.owner != owner {
			return nil, errSessionLockLost(en.path, *sessionID)
		}
	}
	q := &en.q[sub]
	xs := make([]*entry, 0, len(seqs))
	seen := make(map[int64]bool, len(seqs))
	for _, seq := range seqs {
		if seen[seq] {
			continue
		}
		seen[seq] = true
		x, ok := q.deferred.Get(seq)
		if !ok || sessionID != nil && x.session != *sessionID {
			msg := "no deferred message with sequence number %d"
			if y, ok := q.locked.Get(seq); ok && y.state == broker.StateDeferred {
				msg = "the deferred message with sequence number %d is locked by another receiver"
			}
			return nil, newErr(broker.CodeMessageNotFound, en.path, msg, seq)
		}
		xs = append(xs, x)
	}
	hs := make([]handout, 0, len(xs))
	for _, x := range xs {
		hs = append(hs, en.lock(x, owner, now, o))
	}
	if _, err := en.commit(); err != nil {
		return nil, err
	}
	return hs, nil
}
