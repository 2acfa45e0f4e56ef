package store

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/peeklock/peeklock/broker"
)

// Memory is a Store that keeps everything in memory and forgets it on exit.
type Memory struct {
	mu       sync.RWMutex
	entities map[uint32]EntityRecord
	seqs     map[uint32]int64
	messages memoryMessages
	states   map[stateKey]storedState
	dups     map[DuplicateRecord]struct{}
	history  map[HistoryKey]memoryHistory
	histPeak int // most histories since the map was made (see shrinkHistory)
	orphans  int // metas put for messages that were not stored
}

// storedState is a session state and when it was set (unix nanoseconds).
type storedState struct {
	state   []byte
	updated int64
}

// stateKey names a session of an entity.
type stateKey struct {
	entity  uint32
	session string
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
	return &Memory{
		entities: make(map[uint32]EntityRecord),
		seqs:     make(map[uint32]int64),
		messages: newMemoryMessages(),
		states:   make(map[stateKey]storedState),
		dups:     make(map[DuplicateRecord]struct{}),
		history:  make(map[HistoryKey]memoryHistory),
	}
}

// Load hands l the entities in ID order, then the sequences, the session
// states, the duplicate-detection records and the metas, in the orders the
// Loader interface promises.
// The engine only ever loads a memory store empty; sorting keeps the order
// the same as the Pebble store's for tests that use both.
func (s *Memory) Load(l Loader) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, id := range slices.Sorted(maps.Keys(s.entities)) {
		if err := l.Entity(s.entities[id]); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(s.seqs)) {
		if err := l.Sequence(id, s.seqs[id]); err != nil {
			return err
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(s.states), compareStateKeys) {
		st := s.states[k]
		if err := l.SessionState(k.entity, k.session, slices.Clone(st.state), st.updated); err != nil {
			return err
		}
	}
	for _, r := range slices.SortedFunc(maps.Keys(s.dups), compareDuplicates) {
		if err := l.Duplicate(r); err != nil {
			return err
		}
	}
	locs := make([]Loc, 0, s.messages.len())
	s.messages.all(func(k locKey, _ *memoryRecord) {
		locs = append(locs, k.loc())
	})
	slices.SortFunc(locs, compareLocs)
	for _, loc := range locs {
		if err := l.Message(loc, s.messages.get(keyOf(loc)).meta); err != nil {
			return err
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

func compareStateKeys(a, b stateKey) int {
	if c := cmp.Compare(a.entity, b.entity); c != 0 {
		return c
	}
	return cmp.Compare(a.session, b.session)
}

// compareDuplicates orders records by entity, window end and id, as the
// Pebble store's keys sort.
func compareDuplicates(a, b DuplicateRecord) int {
	if c := cmp.Compare(a.Entity, b.Entity); c != 0 {
		return c
	}
	if c := cmp.Compare(a.End, b.End); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Get returns the message at loc.
func (s *Memory) Get(loc Loc) (*broker.Message, error) {
	s.mu.RLock()
	r := s.messages.get(keyOf(loc))
	ok := r != nil
	var meta Meta
	var msg *broker.Message
	if ok {
		meta, msg = r.meta, r.msg
	}
	s.mu.RUnlock()
	if !ok {
		return nil, broker.Errorf(broker.CodeMessageNotFound, "no stored message with sequence number %d", loc.Seq)
	}
	if msg.State == meta.State && msg.DeliveryCount == meta.DeliveryCount {
		return msg, nil
	}
	m := *msg
	m.State, m.DeliveryCount = meta.State, meta.DeliveryCount
	return &m, nil
}

// Bodies reads the messages at locs as they were put.
func (s *Memory) Bodies(locs []Loc, out []*broker.Message) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.messages.bodies(locs, out)
	return nil
}

// Apply applies b at once. A batch that the Pebble store would refuse
// (see checkBatch) is refused here too, and nothing of it is applied.
func (s *Memory) Apply(b *Batch) (Pending, error) {
	if err := checkBatch(b); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range b.Ops {
		op := &b.Ops[i]
		switch op.Kind {
		case OpPutEntity:
			s.entities[op.Entity.ID] = *op.Entity
		case OpDeleteEntity:
			delete(s.entities, op.Loc.Entity)
			delete(s.seqs, op.Loc.Entity)
			s.messages.deleteEntity(op.Loc.Entity)
			for k := range s.states {
				if k.entity == op.Loc.Entity {
					delete(s.states, k)
				}
			}
			for r := range s.dups {
				if r.Entity == op.Loc.Entity {
					delete(s.dups, r)
				}
			}
			for k := range s.history {
				if k.Entity == op.Loc.Entity {
					delete(s.history, k)
				}
			}
		case OpSetSequence:
			s.seqs[op.Loc.Entity] = op.Loc.Seq
		case OpPutMessage:
			s.messages.put(keyOf(op.Loc)).set(op)
		case OpPutMeta:
			if r := s.messages.get(keyOf(op.Loc)); r != nil {
				r.meta = op.Meta
			} else {
				s.orphans++
			}
		case OpDeleteMessage:
			s.messages.delete(keyOf(op.Loc))
		case OpSetSessionState:
			s.states[stateKey{op.Loc.Entity, op.ID}] = storedState{op.State, op.Updated}
		case OpDeleteSessionState:
			delete(s.states, stateKey{op.Loc.Entity, op.ID})
		case OpPutDuplicate:
			s.dups[DuplicateRecord{Entity: op.Loc.Entity, ID: op.ID, End: op.End}] = struct{}{}
		case OpDeleteDuplicate:
			delete(s.dups, DuplicateRecord{Entity: op.Loc.Entity, ID: op.ID, End: op.End})
		}
	}
	for i := range b.Hist {
		s.applyHistory(&b.Hist[i])
	}
	return Done{}, nil
}

// applyHistory applies one history change. Called with mu held.
func (s *Memory) applyHistory(op *HistoryOp) {
	if op.noop() {
		return // cancelled
	}
	h, ok := s.history[op.Key]
	if op.Hide {
		h.hide()
		s.history[op.Key] = h
		s.histPeak = max(s.histPeak, len(s.history))
		return
	}
	if op.Event != nil {
		h.put(op.Index, *op.Event)
		s.history[op.Key] = h
		s.histPeak = max(s.histPeak, len(s.history))
		return
	}
	if !ok {
		return
	}
	if h.drop(op.Index, op.Count); h.empty() {
		delete(s.history, op.Key)
		s.shrinkHistory()
	} else {
		s.history[op.Key] = h
	}
}

// shrinkHistory makes the history map again when it holds far fewer
// histories than it once did: a Go map keeps its memory, and the values
// are kept in it.
func (s *Memory) shrinkHistory() {
	if n := len(s.history); s.histPeak > 1024 && n < s.histPeak/8 {
		m := make(map[HistoryKey]memoryHistory, n) // maps.Clone would keep the size
		for k, h := range s.history {
			m[k] = h
		}
		s.history, s.histPeak = m, n
	}
}

// History returns a copy of the stored history of a message: its history
// records, after the first event kept in its record unless a record of
// index 0 replaces or hides it.
func (s *Memory) History(k HistoryKey) (uint16, []HistoryEvent, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := s.history[k]
	if !h.hidden && (h.n == 0 || h.first == 1) {
		for _, sub := range subQueues {
			if r := s.messages.get(keyOf(Loc{Entity: k.Entity, Sub: sub, Seq: k.Seq})); r != nil && r.first.ok {
				return 0, append([]HistoryEvent{r.first.event()}, h.events()...), nil
			}
		}
	}
	return h.first, h.events(), nil
}

// subQueues lists the sub-queues a message may be stored in.
var subQueues = [...]broker.SubQueue{broker.SubQueueMain, broker.SubQueueDeadLetter, broker.SubQueueTransferDeadLetter}

// HistoryCount returns how many messages have history records (the first
// event kept in a message's record is not one), so that tests can check
// that histories go with their messages.
func (s *Memory) HistoryCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.history)
}

// OrphanMetas returns how many metas were put for messages that were not
// stored: a breach of the Batch.PutMeta contract that the engine's tests
// check never happens.
func (s *Memory) OrphanMetas() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.orphans
}

// Durable reports false.
func (s *Memory) Durable() bool { return false }

// Close does nothing.
func (s *Memory) Close() error { return nil }
