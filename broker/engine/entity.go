package engine

import (
	crand "crypto/rand"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/btree"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// entity is a queue, topic or subscription with its index. Everything below
// mu is guarded by it, except subs (guarded by Engine.mu) and the fields set
// at creation and never changed (eng, id, path, key, kind, topic).
type entity struct {
	mu    sync.Mutex // level 3 of the lock order written down in engine.go
	eng   *Engine
	id    uint32
	path  string
	key   string
	kind  broker.EntityKind
	topic *entity   // a subscription's topic
	subs  []*entity // a topic's subscriptions; guarded by Engine.mu

	deleted      bool
	settings     broker.EntitySettings // normalized
	rules        []broker.Rule         // replaced, never changed in place
	match        *ruleSet              // rules compiled; set with rules
	createdAt    time.Time             // UTC; zero when loaded from a record without it
	updatedAt    time.Time             // UTC
	userMetadata string
	authRules    []broker.AuthorizationRule // replaced, never changed in place

	// accessed is the unix second of the last send or receive request, 0
	// for none. It is atomic, not guarded by mu: a send records it before
	// it takes the entity mutex. It is not stored.
	accessed atomic.Int64
	// used is the unix second (rounded up) of the last operation that
	// counts against AutoDeleteOnIdle (see use); for a topic, operations on
	// its subscriptions count too. It starts at the entity's creation or
	// load. Atomic like accessed, and not stored either.
	used atomic.Int64
	// tally counts the message events of the entity since the engine
	// opened, by kind (see count); atomic so that Stats reads them without
	// mu. Not stored.
	tally [numEventKinds]atomic.Uint64
	// status mirrors settings.Status, so that a subscription can check its
	// topic's status without the topic's mutex. Written under mu.
	status atomic.Uint32
	// published is a copy of settings as last committed, for readers that
	// must not wait on mu (EntityShape). Replaced under mu, never changed.
	published atomic.Pointer[broker.EntitySettings]

	lastSeq int64
	size    int64 // bytes of every stored message (all sub-queues) plus sends in flight

	q         [numSubQueues]queueIndex // indexed by broker.SubQueue
	scheduled *seqSet                  // Scheduled messages by sequence number
	schedAt   *tree                    // Scheduled messages by (activation time, seq)
	lockAt    *lockQueue               // locked messages of every sub-queue in expiry order
	ttl       *tree                    // unlocked main-queue messages that expire, by (expiry, seq)

	sessions     map[string]*session
	free         *btree.BTreeG[*session] // unlocked sessions with available messages, by first seq
	sessionLocks *btree.BTreeG[*session] // locked sessions by lock expiry

	dup     map[string]int64 // message id -> end of its duplicate-detection window (unix ns)
	dupq    []dupRecord      // the same in insertion order, for pruning
	dupHead int

	waiters [numSubQueues]waitList // receivers waiting for a message, per sub-queue (and accept-next-session)
	owners  map[uint64]struct{}
	rng     *rand.ChaCha8

	registered int64       // deadline registered with the sweeper; 0: none
	batch      store.Batch // store changes made under mu, applied by commit
	hist       historyLog  // the message histories, which it adds to batch
	outbox     []outItem   // dead-lettered messages to forward after mu is released
}

// numSubQueues is the number of sub-queues of an entity: the main queue, the
// dead-letter and the transfer dead-letter sub-queue.
const numSubQueues = int(broker.SubQueueTransferDeadLetter) + 1

type dupRecord struct {
	id  string
	end int64
}

func newEntity(eng *Engine, id uint32, ent broker.Entity) *entity {
	en := &entity{
		eng:          eng,
		id:           id,
		path:         ent.Path,
		key:          pathKey(ent.Path),
		kind:         ent.Kind,
		settings:     ent.Settings.Normalize(),
		rules:        subscriptionRules(ent),
		createdAt:    ent.CreatedAt,
		updatedAt:    ent.UpdatedAt,
		userMetadata: ent.UserMetadata,
		q:            [numSubQueues]queueIndex{newQueueIndex(), newQueueIndex(), newQueueIndex()},
		scheduled:    newSeqSet(),
		schedAt:      newAtTree(),
		lockAt:       newLockQueue(),
		ttl:          newExpiryTree(),
		sessions:     make(map[string]*session),
		free:         btree.NewBTreeGOptions(sessionByFree, btree.Options{NoLocks: true}),
		sessionLocks: btree.NewBTreeGOptions(sessionByLock, btree.Options{NoLocks: true}),
		dup:          make(map[string]int64),
		rng:          newRNG(),
	}
	en.hist = historyLog{eng: eng, id: id, path: en.path, batch: &en.batch}
	en.match = mustCompile(en.path, en.rules)
	en.authRules = slices.Clone(ent.AuthorizationRules)
	en.status.Store(uint32(en.settings.Status))
	en.publishSettings()
	en.used.Store(ceilSecond(eng.now()))
	if ent.Kind == broker.KindSubscription && !ent.CreatedAt.IsZero() {
		// Service Bus reports a new subscription as accessed when it was
		// created.
		en.accessed.Store(ent.CreatedAt.Unix())
	}
	return en
}

// subscriptionRules returns the rules a new entity starts with: nil for a
// queue or topic; for a subscription its rules, or, when ent.Rules is nil,
// the $Default TrueFilter created with the subscription (a subscription
// created without rules, or stored by a version that kept the $Default rule
// as no rule at all). An empty, non-nil ent.Rules is a subscription without
// rules, which takes no message.
func subscriptionRules(ent broker.Entity) []broker.Rule {
	switch {
	case ent.Kind != broker.KindSubscription:
		return nil
	case ent.Rules == nil:
		return []broker.Rule{{Name: broker.DefaultRuleName, CreatedAt: ent.CreatedAt}}
	}
	return ent.Rules
}

func newRNG() *rand.ChaCha8 {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails on supported platforms
	return rand.NewChaCha8(seed)
}

// publishSettings makes the settings in force what EntityShape reads.
// Called with en locked (or not yet shared) after a change is committed.
func (en *entity) publishSettings() {
	s := en.settings
	en.published.Store(&s)
}

// public returns the entity as the contract describes it, with counts.
func (en *entity) public() broker.Entity {
	ent := broker.Entity{
		Path:         en.path,
		Kind:         en.kind,
		Settings:     en.settings,
		CreatedAt:    en.createdAt,
		UpdatedAt:    en.updatedAt,
		UserMetadata: en.userMetadata,
	}
	if en.authRules != nil {
		ent.AuthorizationRules = slices.Clone(en.authRules)
	}
	if en.kind == broker.KindSubscription {
		ent.Rules = append([]broker.Rule{}, en.rules...) // not nil: none is no rule
	}
	if en.kind != broker.KindTopic {
		ent.Counts = en.counts()
	}
	if s := en.accessed.Load(); s != 0 {
		ent.AccessedAt = time.Unix(s, 0).UTC()
	}
	return ent
}

// touch records a send or receive request at now (unix nanoseconds) in
// AccessedAt, to the second. It writes only when the second changes, so
// that the hot paths share the cache line read-only; it never moves
// AccessedAt back.
func (en *entity) touch(now int64) {
	raise(&en.accessed, now/int64(time.Second))
	en.use(now)
}

// use records, at now (unix nanoseconds), an operation that keeps the
// entity from being idle (AutoDeleteOnIdle): a send, a receive, a
// settlement or lock renewal, a session operation, a scheduled message
// cancelled, a change of its settings or rules. An operation on a
// subscription keeps its topic from being idle too. Browsing does not count
// (the dashboard browses the entity it shows on every poll).
func (en *entity) use(now int64) {
	sec := ceilSecond(now)
	for x := en; x != nil; x = x.topic {
		raise(&x.used, sec)
	}
}

// raise sets v to sec when that is later; it writes only then, so that the
// hot paths share the cache line read-only.
func raise(v *atomic.Int64, sec int64) {
	for {
		old := v.Load()
		if old >= sec || v.CompareAndSwap(old, sec) {
			return
		}
	}
}

// ceilSecond returns the unix second at or after now (unix nanoseconds).
func ceilSecond(now int64) int64 {
	return (now + int64(time.Second) - 1) / int64(time.Second)
}

// idleDeadline returns when (unix ns) the entity has been idle for its
// AutoDeleteOnIdle and is to be deleted, or 0 when it never is. Called with
// mu held.
func (en *entity) idleDeadline() int64 {
	idle := en.settings.AutoDeleteOnIdle
	if idle <= 0 || idle >= broker.MaxTimeToLive {
		return 0
	}
	last := max(en.used.Load(), en.accessed.Load())
	if last > (math.MaxInt64-int64(idle))/int64(time.Second) {
		return 0
	}
	return last*int64(time.Second) + int64(idle)
}

// sendRefused returns the error for a send to the entity when its status
// does not take sends, or nil.
func (en *entity) sendRefused() error {
	st := broker.EntityStatus(en.status.Load())
	if st.CanSend() {
		return nil
	}
	return errDisabled(en.path, st, "Send")
}

// receiveRefused returns the error for a receive or settlement on the
// entity when its status, or for a subscription its topic's, does not allow
// it, or nil.
func (en *entity) receiveRefused() error {
	st := broker.EntityStatus(en.status.Load())
	if !st.CanReceive() {
		return errDisabled(en.path, st, "Receive")
	}
	if en.topic != nil && broker.EntityStatus(en.topic.status.Load()) == broker.StatusDisabled {
		return errDisabled(en.path, broker.StatusDisabled, "Receive")
	}
	return nil
}

func (en *entity) counts() broker.Counts {
	m := &en.q[broker.SubQueueMain]
	return broker.Counts{
		Active:               int64(m.active.Len()),
		Locked:               int64(m.locked.Len()),
		Deferred:             int64(m.deferred.Len()),
		Scheduled:            int64(en.scheduled.Len()),
		DeadLettered:         int64(en.q[broker.SubQueueDeadLetter].len()),
		TransferDeadLettered: int64(en.q[broker.SubQueueTransferDeadLetter].len()),
		SizeBytes:            en.size,
	}
}

// sessionful reports whether x belongs to a session of a session-aware
// entity (the dead-letter sub-queues are not session-aware).
func (en *entity) sessionful(x *entry) bool {
	return en.settings.RequiresSession && x.sub == broker.SubQueueMain
}

// index puts x into the trees its fields call for. A message whose lock is
// its session's has no expiry of its own (see coveredBySession), so it
// stays out of lockAt.
func (en *entity) index(x *entry) {
	q := &en.q[x.sub]
	if x.locked() {
		q.locked.Set(x)
		if en.sessionful(x) {
			en.session(x.session).locked[x] = struct{}{}
		}
		if !en.coveredBySession(x) {
			en.lockAt.Set(x)
		}
		return
	}
	switch x.state {
	case broker.StateActive:
		q.active.Set(x)
		if en.sessionful(x) {
			s := en.session(x.session)
			s.active.Set(x)
			en.refreshFree(s)
		}
	case broker.StateDeferred:
		q.deferred.Set(x)
	case broker.StateScheduled:
		en.scheduled.Set(x)
		en.schedAt.Set(x)
	}
	if x.sub == broker.SubQueueMain && x.expires != 0 {
		en.ttl.Set(x)
	}
}

// unindex takes x out of every tree it is in; index(x) after changing its
// fields puts it back.
func (en *entity) unindex(x *entry) {
	q := &en.q[x.sub]
	if x.locked() {
		q.locked.Delete(x)
		if en.sessionful(x) {
			if s := en.sessions[x.session]; s != nil {
				delete(s.locked, x)
			}
		}
		en.lockAt.Delete(x) // a no-op for a lock its session covers
		return
	}
	switch x.state {
	case broker.StateActive:
		q.active.Delete(x)
		if en.sessionful(x) {
			if s := en.sessions[x.session]; s != nil {
				s.active.Delete(x)
				en.refreshFree(s)
			}
		}
	case broker.StateDeferred:
		q.deferred.Delete(x)
	case broker.StateScheduled:
		en.scheduled.Delete(x)
		en.schedAt.Delete(x)
	}
	if x.sub == broker.SubQueueMain && x.expires != 0 {
		en.ttl.Delete(x)
	}
}

// add indexes a new entry and counts it in its session. Its size was counted
// when it was accepted (sends in flight count against the quota).
func (en *entity) add(x *entry) {
	if en.sessionful(x) {
		en.session(x.session).count++
	}
	en.index(x)
}

// remove unindexes x for good, deletes it from the store and uncounts it.
func (en *entity) remove(x *entry) {
	en.unindex(x)
	en.forget(x)
	en.batch.DeleteMessage(x.loc(en.id))
}

// forget uncounts an entry that has already been unindexed.
func (en *entity) forget(x *entry) {
	en.hist.drop(x)
	x.gone = true
	en.size -= int64(x.size)
	en.leaveMain(x)
}

// leaveMain uncounts x from its session when it leaves the main queue.
func (en *entity) leaveMain(x *entry) {
	if !en.sessionful(x) {
		return
	}
	if s := en.sessions[x.session]; s != nil {
		s.count--
		en.maybeDropSession(s)
	}
}

// commit applies the store changes made under mu. The caller may Wait on the
// result after releasing mu.
func (en *entity) commit() (store.Pending, error) {
	if en.hist.ridersOnly() {
		return store.Done{}, nil // riders alone wait for a change
	}
	return en.apply()
}

// apply applies the batch.
func (en *entity) apply() (store.Pending, error) {
	if en.batch.Len() == 0 {
		return store.Done{}, nil
	}
	// Apply consumes the batch before it returns (Store.Apply makes the
	// changes visible at once), so its ops slice is reused.
	p, err := en.eng.store.Apply(&en.batch)
	en.resetBatch()
	if err != nil {
		en.eng.log.Error("store apply failed", "entity", en.path, "err", err)
		return nil, storeErr("store the change", en.path, err)
	}
	return p, nil
}

// resetBatch empties the batch.
func (en *entity) resetBatch() {
	en.batch.Reset()
	if cap(en.batch.Ops) > maxKeptOps || cap(en.batch.Hist) > maxKeptOps {
		en.batch = store.Batch{} // a huge batch (a purge, a settlement of thousands) keeps no memory
	}
	en.hist.reset()
}

// maxKeptOps is the capacity of a batch (and of a history log's buf) that
// an entity keeps for reuse.
const maxKeptOps = 1024

// flushRiders applies the batch with every held history event (a history
// is read, the engine closes, too many are held), and logs a failure.
func (en *entity) flushRiders() {
	en.hist.boardAll()
	if _, err := en.apply(); err != nil {
		en.eng.log.Error("storing history events failed", "entity", en.path, "err", err)
	}
}

// commitQuiet applies pending store changes of background work (expiry,
// activation) and logs a failure; nobody waits for them.
func (en *entity) commitQuiet() {
	if _, err := en.commit(); err != nil {
		en.eng.log.Error("background store change failed", "entity", en.path, "err", err)
	}
}

// nextDeadline returns the earliest time (unix ns) something is due, or 0.
func (en *entity) nextDeadline() int64 {
	var next int64
	consider := func(t int64) {
		if t != 0 && (next == 0 || t < next) {
			next = t
		}
	}
	if x, ok := en.lockAt.Min(); ok {
		consider(x.at)
	}
	if x, ok := en.schedAt.Min(); ok {
		consider(x.at)
	}
	if x, ok := en.ttl.Min(); ok {
		consider(x.expires)
	}
	if s, ok := en.sessionLocks.Min(); ok {
		consider(s.lockedUntil)
	}
	consider(en.idleDeadline())
	return next
}

// scheduleNext tells the sweeper about the entity's next deadline when it is
// earlier than the one already registered.
func (en *entity) scheduleNext() {
	if en.deleted {
		return
	}
	next := en.nextDeadline()
	if next != 0 && (en.registered == 0 || next < en.registered) {
		en.registered = next
		en.eng.sweep.register(en, next)
	}
}

// maxMessageSize and maxTotalSize are the quota limits in bytes.
func (en *entity) maxMessageSize() int64 { return en.settings.MaxMessageSizeInKilobytes * 1024 }
func (en *entity) maxTotalSize() int64   { return en.settings.MaxSizeInMegabytes * 1024 * 1024 }

// noteOwner records that owner holds a lock here, so DropOwner finds it.
func (en *entity) noteOwner(owner uint64) {
	if owner == 0 {
		return
	}
	if _, ok := en.owners[owner]; ok {
		return
	}
	if en.owners == nil {
		en.owners = make(map[uint64]struct{})
	}
	en.owners[owner] = struct{}{}
	en.eng.addOwner(owner, en)
}

// addOwner records in the registry that owner holds locks in en.
func (e *Engine) addOwner(owner uint64, en *entity) {
	e.ownersMu.Lock()
	defer e.ownersMu.Unlock()
	set := e.owners[owner]
	if set == nil {
		set = make(map[*entity]struct{})
		e.owners[owner] = set
	}
	set[en] = struct{}{}
}
