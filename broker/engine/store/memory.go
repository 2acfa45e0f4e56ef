package store

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/peeklock/peeklock/broker"
)

// Memory is a Store that keeps everything in memory and forgets it on exit.
// It keeps each entity in a shard of its own (memoryShard), under its own
// mutex: a batch locks the shards of the entities it changes (one, but for
// a topic's fan-out), in the order of their ids, so that batches of
// different entities apply at once and a batch of several is still seen
// whole or not at all.
type Memory struct {
	mu      sync.RWMutex // guards shards, the map; each shard guards itself
	shards  map[uint32]*memoryShard
	spares  sparePages    // the shards' spare pages
	ops     atomic.Uint64 // puts and deletes (every op, counted by batch) so far
	orphans atomic.Int64  // metas put for messages that were not stored

	thinMu sync.Mutex
	thin   []*memoryShard // shards whose pages wait to be shrunk (see sweepThin)
}

// storedState is a session state and when it was set (unix nanoseconds).
type storedState struct {
	state   []byte
	updated int64
}

// memoryRecord is a stored message: its meta, the message, and the first
// event of its history when it was put with it (see PutMessageWithHistory).
// Records live in the slots of memoryMessages' pages: 136 bytes.
type memoryRecord struct {
	meta  Meta
	msg   *broker.Message
	first memoryFirst
}

// set fills in the empty record r from the put op.
func (r *memoryRecord) set(op *Op) {
	r.meta, r.msg = op.Meta, op.Message
	if op.First != nil {
		r.first.set(op.First)
	}
}

// memoryFirst is the first event of a message's history as its record
// keeps it, when ok: the fields of a send, 32 bytes less than a
// HistoryEvent (every message has one); an event with a lock or a reason
// is kept whole in full.
type memoryFirst struct {
	ok     bool
	kind   broker.EventKind
	sub    broker.SubQueue
	count  uint32
	time   int64
	actor  string
	detail string
	full   *HistoryEvent
}

// set keeps ev in f.
func (f *memoryFirst) set(ev *HistoryEvent) {
	f.ok = true
	if ev.Until != 0 || !ev.Token.IsZero() || ev.Reason != "" {
		full := *ev
		f.full = &full
		return
	}
	f.kind, f.sub, f.count, f.time, f.actor, f.detail = ev.Kind, ev.Sub, ev.DeliveryCount, ev.Time, ev.Actor, ev.Detail
}

// event returns the event f keeps.
func (f *memoryFirst) event() HistoryEvent {
	if f.full != nil {
		return *f.full
	}
	return HistoryEvent{Kind: f.kind, Sub: f.sub, DeliveryCount: f.count, Time: f.time, Actor: f.actor, Detail: f.detail}
}

// NewMemory returns an empty memory store.
func NewMemory() *Memory {
	return &Memory{shards: make(map[uint32]*memoryShard)}
}

// sorted returns the shards in the order of their entities' ids.
func (s *Memory) sorted() []*memoryShard {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.SortedFunc(maps.Values(s.shards), func(a, b *memoryShard) int { return cmp.Compare(a.id, b.id) })
}

// Load hands l the entities in ID order, then the sequences, the session
// states, the duplicate-detection records and the metas, in the orders the
// Loader interface promises.
// The engine only ever loads a memory store empty; sorting keeps the order
// the same as the Pebble store's for tests that use both.
func (s *Memory) Load(l Loader) error {
	shards := s.sorted()
	for _, sh := range shards {
		sh.mu.RLock()
		defer sh.mu.RUnlock()
	}
	for _, sh := range shards {
		if sh.entity != nil {
			if err := l.Entity(*sh.entity); err != nil {
				return err
			}
		}
	}
	for _, sh := range shards {
		if sh.hasSeq {
			if err := l.Sequence(sh.id, sh.seq); err != nil {
				return err
			}
		}
	}
	for _, sh := range shards {
		for _, id := range slices.Sorted(maps.Keys(sh.states)) {
			st := sh.states[id]
			if err := l.SessionState(sh.id, id, slices.Clone(st.state), st.updated); err != nil {
				return err
			}
		}
	}
	for _, sh := range shards {
		for _, d := range slices.SortedFunc(maps.Keys(sh.dups), compareDups) {
			if err := l.Duplicate(DuplicateRecord{Entity: sh.id, ID: d.id, End: d.end}); err != nil {
				return err
			}
		}
	}
	for _, sh := range shards {
		locs := make([]Loc, 0, sh.messages.len())
		sh.messages.all(func(k locKey, _ *memoryRecord) {
			locs = append(locs, k.loc())
		})
		slices.SortFunc(locs, compareLocs)
		for _, loc := range locs {
			if err := l.Message(loc, sh.messages.get(keyOf(loc)).meta); err != nil {
				return err
			}
		}
	}
	return nil
}

// compareLocs orders locations by entity, sub-queue and sequence number.
func compareLocs(a, b Loc) int {
	if c := cmp.Compare(a.Entity, b.Entity); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Sub, b.Sub); c != 0 {
		return c
	}
	return cmp.Compare(a.Seq, b.Seq)
}

// compareDups orders an entity's duplicate-detection records by window end
// and id, as the Pebble store's keys sort.
func compareDups(a, b dupKey) int {
	if c := cmp.Compare(a.end, b.end); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// shard returns the shard of entity id, or nil.
func (s *Memory) shard(id uint32) *memoryShard {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.shards[id]
}

// reading returns the shard of entity id locked for reading, or nil when
// the store keeps nothing of it.
func (s *Memory) reading(id uint32) *memoryShard {
	for {
		sh := s.shard(id)
		if sh == nil {
			return nil
		}
		sh.mu.RLock()
		if !sh.dead {
			return sh
		}
		sh.mu.RUnlock()
	}
}

// Get returns the message at loc.
func (s *Memory) Get(loc Loc) (*broker.Message, error) {
	var r *memoryRecord
	var meta Meta
	var msg *broker.Message
	if sh := s.reading(loc.Entity); sh != nil {
		if r = sh.messages.get(keyOf(loc)); r != nil {
			meta, msg = r.meta, r.msg
		}
		sh.mu.RUnlock()
	}
	if r == nil {
		return nil, broker.Errorf(broker.CodeMessageNotFound, "no stored message with sequence number %d", loc.Seq)
	}
	if msg.State == meta.State && msg.DeliveryCount == meta.DeliveryCount {
		return msg, nil
	}
	m := *msg
	m.State, m.DeliveryCount = meta.State, meta.DeliveryCount
	return &m, nil
}

// Bodies reads the messages at locs as they were put, a run of one
// entity's locations at a time.
func (s *Memory) Bodies(locs []Loc, out []*broker.Message) error {
	for len(locs) > 0 {
		id := locs[0].Entity
		n := 1
		for n < len(locs) && locs[n].Entity == id {
			n++
		}
		if sh := s.reading(id); sh != nil {
			sh.messages.bodies(locs[:n], out)
			sh.mu.RUnlock()
		} else {
			clear(out[:n])
		}
		locs, out = locs[n:], out[n:]
	}
	return nil
}

// Apply applies b at once. A batch that the Pebble store would refuse
// (see checkBatch) is refused here too, and nothing of it is applied.
func (s *Memory) Apply(b *Batch) (Pending, error) {
	if err := checkBatch(b); err != nil {
		return nil, err
	}
	if b.Len() == 0 {
		return Done{}, nil
	}
	n := uint64(b.Len())
	ops := s.ops.Add(n)
	var ids [8]uint32 // a fan-out to up to 7 subscriptions allocates nothing
	var held [8]*memoryShard
	changed, deleted := entitiesOf(b, ids[:0])
	shards := s.lock(changed, held[:0])
	for _, sh := range shards {
		sh.messages.catchUp(ops - n)
		sh.lastOps.Store(ops)
	}
	sh := shards[0] // of every op but in a batch of several entities
	for i := range b.Ops {
		op := &b.Ops[i]
		if len(shards) > 1 {
			sh = shardOf(shards, opEntity(op))
		}
		sh.apply(op, &s.orphans)
	}
	for i := range b.Hist {
		op := &b.Hist[i]
		if len(shards) > 1 {
			sh = shardOf(shards, op.Key.Entity)
		}
		sh.applyHistory(op)
	}
	for _, sh := range shards {
		if sh.messages.waiting() && !sh.listed.Load() {
			sh.listed.Store(true)
			s.thinMu.Lock()
			s.thin = append(s.thin, sh)
			s.thinMu.Unlock()
		}
		sh.mu.Unlock()
	}
	if deleted {
		s.dropEmpty(shards)
	}
	if (ops-n)/idleOps != ops/idleOps {
		s.sweepThin(ops)
	}
	return Done{}, nil
}

// opEntity returns the id of the entity op changes.
func opEntity(op *Op) uint32 {
	if op.Kind == OpPutEntity {
		return op.Entity.ID
	}
	return op.Loc.Entity
}

// entitiesOf appends to ids the ids of the entities b changes, in order,
// each once, and reports whether it deletes one. b is not empty.
func entitiesOf(b *Batch, ids []uint32) (_ []uint32, deletes bool) {
	var first uint32
	if len(b.Ops) > 0 {
		first = opEntity(&b.Ops[0])
	} else {
		first = b.Hist[0].Key.Entity
	}
	one := true // mostly: a topic's fan-out changes several
	for i := range b.Ops {
		op := &b.Ops[i]
		one = one && opEntity(op) == first
		deletes = deletes || op.Kind == OpDeleteEntity
	}
	for i := range b.Hist {
		one = one && b.Hist[i].Key.Entity == first
	}
	if one {
		return append(ids, first), deletes
	}
	add := func(id uint32) { // a fan-out's ops come an entity at a time
		if n := len(ids); n == 0 || ids[n-1] != id {
			ids = append(ids, id)
		}
	}
	for i := range b.Ops {
		add(opEntity(&b.Ops[i]))
	}
	for i := range b.Hist {
		add(b.Hist[i].Key.Entity)
	}
	slices.Sort(ids)
	return slices.Compact(ids), deletes
}

// shardOf returns the shard of entity id among shards, in the order of
// their ids (a batch of several entities; Apply takes the one of a batch
// of one without looking).
func shardOf(shards []*memoryShard, id uint32) *memoryShard {
	i, _ := slices.BinarySearchFunc(shards, id, func(sh *memoryShard, id uint32) int { return cmp.Compare(sh.id, id) })
	return shards[i]
}

// lock appends to held the shards of the entities ids (in order, each
// once), made when the store has none yet, each locked for writing, in
// that order. They are all found before the first is locked, as making
// one takes the store's mutex, which dropEmpty holds while it locks
// shards.
func (s *Memory) lock(ids []uint32, held []*memoryShard) []*memoryShard {
	for {
		held = s.find(ids, held[:0])
		for i, sh := range held {
			sh.mu.Lock()
			if sh.dead { // deleted since it was looked up: again, from the start
				for _, h := range held[:i+1] {
					h.mu.Unlock()
				}
				held = held[:0]
				break
			}
		}
		if len(held) > 0 {
			return held
		}
	}
}

// find appends to shards the shards of the entities ids, made when the
// store has none yet.
func (s *Memory) find(ids []uint32, shards []*memoryShard) []*memoryShard {
	s.mu.RLock()
	for _, id := range ids {
		sh := s.shards[id]
		if sh == nil {
			break
		}
		shards = append(shards, sh)
	}
	s.mu.RUnlock()
	if len(shards) == len(ids) {
		return shards
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids[len(shards):] {
		sh := s.shards[id]
		if sh == nil {
			sh = newMemoryShard(id, &s.spares)
			s.shards[id] = sh
		}
		shards = append(shards, sh)
	}
	return shards
}

// dropEmpty takes the shards that keep nothing (their entities were
// deleted) out of the store.
func (s *Memory) dropEmpty(shards []*memoryShard) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sh := range shards {
		sh.mu.Lock()
		if !sh.dead && sh.empty() && s.shards[sh.id] == sh {
			sh.dead = true
			delete(s.shards, sh.id)
		}
		sh.mu.Unlock()
	}
}

// idleOps is how many puts and deletes of the store a shard goes without a
// batch before sweepThin shrinks its thin pages, and how often it looks:
// far more than thinDelay, so that it never takes a busy shard's mutex (a
// hundred queues at work a batch at a time write each one every few
// thousand).
const idleOps = 64 * thinDelay

// sweepThin shrinks the thin pages of the shards that no batch has
// written for idleOps puts and deletes of the store, as a shard's own
// puts and deletes shrink its pages (memoryMessages.tick): an entity left
// idle keeps no full page for a record or two. ops is the store's count
// now. One sweep runs at a time, and a shard that a batch holds is passed
// over, for the next sweep.
func (s *Memory) sweepThin(ops uint64) {
	if !s.thinMu.TryLock() {
		return
	}
	list := s.thin
	s.thin = nil
	s.thinMu.Unlock()
	keep := list[:0]
	for _, sh := range list {
		if ops-sh.lastOps.Load() < idleOps || !sh.mu.TryLock() {
			keep = append(keep, sh)
			continue
		}
		if !sh.dead {
			sh.messages.catchUp(ops)
			sh.messages.shrinkThin(ops - thinDelay)
		}
		if !sh.dead && sh.messages.waiting() {
			keep = append(keep, sh)
		} else {
			sh.listed.Store(false)
		}
		sh.mu.Unlock()
	}
	s.thinMu.Lock()
	s.thin = append(s.thin, keep...)
	s.thinMu.Unlock()
}

// History returns a copy of the stored history of a message: its history
// records, after the first event kept in its record unless a record of
// index 0 replaces or hides it.
func (s *Memory) History(k HistoryKey) (uint16, []HistoryEvent, error) {
	sh := s.reading(k.Entity)
	if sh == nil {
		return 0, nil, nil
	}
	defer sh.mu.RUnlock()
	first, evs := sh.historyOf(k.Seq)
	return first, evs, nil
}

// subQueues lists the sub-queues a message may be stored in.
var subQueues = [...]broker.SubQueue{broker.SubQueueMain, broker.SubQueueDeadLetter, broker.SubQueueTransferDeadLetter}

// HistoryCount returns how many messages have history records (the first
// event kept in a message's record is not one), so that tests can check
// that histories go with their messages.
func (s *Memory) HistoryCount() int {
	shards := s.sorted()
	n := 0
	for _, sh := range shards {
		sh.mu.RLock()
		n += len(sh.history)
		sh.mu.RUnlock()
	}
	return n
}

// OrphanMetas returns how many metas were put for messages that were not
// stored: a breach of the Batch.PutMeta contract that the engine's tests
// check never happens.
func (s *Memory) OrphanMetas() int { return int(s.orphans.Load()) }

// Durable reports false.
func (s *Memory) Durable() bool { return false }

// Close does nothing.
func (s *Memory) Close() error { return nil }
