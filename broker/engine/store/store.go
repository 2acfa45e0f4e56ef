// Package store keeps the engine's entities and messages, in memory or
// durably on disk with Pebble, behind one interface.
//
// A message is stored as two records: its Meta (small and mutable: state,
// delivery count, times), which the engine reads at start to rebuild its
// indexes, and the full message (written once, read when a message is
// browsed or delivered). Locks are never stored: they are volatile in
// Service Bus too. Session states and duplicate-detection records (one per
// message id an entity that requires duplicate detection accepted, until
// its window ends) are stored with the change that makes them, and deleted
// with their entity.
package store

import (
	"github.com/peeklock/peeklock/broker"
)

// Loc is where a message is stored: its entity, sub-queue and sequence number.
// A dead-lettered message keeps its sequence number in the dead-letter
// sub-queue, as in Service Bus, and a message that could not be forwarded
// the number its entity gave it in the transfer dead-letter sub-queue. The
// Pebble store keeps Sub as one byte of the key, so adding the transfer
// dead-letter sub-queue (2) changed nothing in the layout: older stores
// hold only 0 and 1 and load unchanged.
type Loc struct {
	Entity uint32
	Sub    broker.SubQueue
	Seq    int64
}

// Meta is the mutable, indexed part of a stored message.
type Meta struct {
	State         broker.State
	DeliveryCount uint32
	EnqueuedTime  int64 // unix nanoseconds
	ExpiresAt     int64 // unix nanoseconds; 0: never
	ScheduledTime int64 // unix nanoseconds; 0: not scheduled
	Size          int64
	SessionID     string
	MessageID     string
}

// EntityRecord is a stored entity definition. Entity IDs are assigned by the
// engine and never reused.
type EntityRecord struct {
	ID     uint32
	Entity broker.Entity // Counts are not stored
}

// OpKind says what an Op does.
type OpKind uint8

// Op kinds.
const (
	OpPutEntity     OpKind = iota // store Entity
	OpDeleteEntity                // delete entity Loc.Entity with all its messages and its sequence
	OpSetSequence                 // the highest sequence number assigned in Loc.Entity is Loc.Seq
	OpPutMessage                  // store Meta and Message at Loc
	OpPutMeta                     // replace the Meta of the stored message at Loc
	OpDeleteMessage               // delete the message at Loc
	// Added after layout version 1 shipped; older stores simply hold none of
	// their records.
	OpSetSessionState    // store State as the state of session ID in Loc.Entity
	OpDeleteSessionState // delete the state of session ID in Loc.Entity
	OpPutDuplicate       // remember message id ID in Loc.Entity until End
	OpDeleteDuplicate    // forget the record of message id ID in Loc.Entity ending at End
)

// Op is one change in a Batch.
type Op struct {
	Kind    OpKind
	Loc     Loc
	Meta    Meta
	Message *broker.Message
	// First is the first event of the message's history (index 0), kept
	// in its record (OpPutMessage; nil: none). See PutMessageWithHistory.
	First *HistoryEvent
	// Entity is the record of OpPutEntity. It is a pointer so that every
	// other op, two or three per message, stays small: a batch copies its
	// ops in and clears them out, and an entity record is 392 bytes.
	Entity *EntityRecord
	// ID is the session id (OpSetSessionState, OpDeleteSessionState) or the
	// message id (OpPutDuplicate, OpDeleteDuplicate).
	ID string
	// State is the session state of OpSetSessionState (not nil), and
	// Updated when it was set, unix nanoseconds (0: not known).
	State   []byte
	Updated int64
	// End is the end of a duplicate-detection window, unix nanoseconds.
	End int64
}

// DuplicateRecord says that a message id was accepted by an entity that
// requires duplicate detection, and that a message with the same id is a
// duplicate until End (unix nanoseconds; math.MaxInt64: for ever). A
// record is identified by its entity, id and End: an id seen again after its
// window has passed gets a second record.
type DuplicateRecord struct {
	Entity uint32
	ID     string
	End    int64
}

// Batch is a list of changes applied atomically, in order: Ops, then the
// message history changes of Hist (see PutHistory), which are kept apart
// because they are many and small.
type Batch struct {
	Ops  []Op
	Hist []HistoryOp
}

// PutEntity stores an entity definition.
func (b *Batch) PutEntity(rec EntityRecord) {
	b.Ops = append(b.Ops, Op{Kind: OpPutEntity, Loc: Loc{Entity: rec.ID}, Entity: &rec})
}

// DeleteEntity deletes an entity with all its messages.
func (b *Batch) DeleteEntity(id uint32) {
	b.Ops = append(b.Ops, Op{Kind: OpDeleteEntity, Loc: Loc{Entity: id}})
}

// SetSequence records the highest sequence number assigned in an entity, so
// that numbers are never reused after a restart.
func (b *Batch) SetSequence(id uint32, last int64) {
	b.Ops = append(b.Ops, Op{Kind: OpSetSequence, Loc: Loc{Entity: id, Seq: last}})
}

// PutMessage stores a message with its meta. The store keeps msg: the caller
// must not change it afterwards.
func (b *Batch) PutMessage(loc Loc, meta Meta, msg *broker.Message) {
	b.Ops = append(b.Ops, Op{Kind: OpPutMessage, Loc: loc, Meta: meta, Message: msg})
}

// PutMessageWithHistory is PutMessage with the first event of the
// message's history (index 0) kept in the message's own record instead of
// a history record of its own: one write instead of two at a send, and
// nothing to delete when the message goes with only that event (see
// HideFirstHistory). A put of the message again keeps it only when given
// again. The store copies *first when the batch is applied.
func (b *Batch) PutMessageWithHistory(loc Loc, meta Meta, msg *broker.Message, first *HistoryEvent) {
	b.Ops = append(b.Ops, Op{Kind: OpPutMessage, Loc: loc, Meta: meta, Message: msg, First: first})
}

// PutMeta replaces a stored message's meta. The message must be stored
// (by an earlier batch or an earlier op of this one) and not deleted since:
// stores do not look before they write, so that handing out a message costs
// no read. The memory store drops a meta of a missing message and counts it
// (see Memory.OrphanMetas); the Pebble store would keep a meta without a
// body. The engine writes metas only for messages in its index, under the
// entity's mutex, so the order of its batches guarantees this.
func (b *Batch) PutMeta(loc Loc, meta Meta) {
	b.Ops = append(b.Ops, Op{Kind: OpPutMeta, Loc: loc, Meta: meta})
}

// DeleteMessage deletes a stored message.
func (b *Batch) DeleteMessage(loc Loc) {
	b.Ops = append(b.Ops, Op{Kind: OpDeleteMessage, Loc: loc})
}

// SetSessionState stores the state of a session and when it was set
// (updated, unix nanoseconds; 0 when not known); a nil state deletes it, as
// DeleteSessionState does. The store keeps state: the caller must not change
// it afterwards. An empty, non-nil state is kept as an empty state.
func (b *Batch) SetSessionState(entity uint32, sessionID string, state []byte, updated int64) {
	if state == nil {
		b.DeleteSessionState(entity, sessionID)
		return
	}
	b.Ops = append(b.Ops, Op{Kind: OpSetSessionState, Loc: Loc{Entity: entity}, ID: sessionID, State: state, Updated: updated})
}

// DeleteSessionState deletes the state of a session (nothing when it has
// none).
func (b *Batch) DeleteSessionState(entity uint32, sessionID string) {
	b.Ops = append(b.Ops, Op{Kind: OpDeleteSessionState, Loc: Loc{Entity: entity}, ID: sessionID})
}

// PutDuplicate stores a duplicate-detection record.
func (b *Batch) PutDuplicate(r DuplicateRecord) {
	b.Ops = append(b.Ops, Op{Kind: OpPutDuplicate, Loc: Loc{Entity: r.Entity}, ID: r.ID, End: r.End})
}

// DeleteDuplicate deletes a duplicate-detection record (nothing when it is
// not stored).
func (b *Batch) DeleteDuplicate(r DuplicateRecord) {
	b.Ops = append(b.Ops, Op{Kind: OpDeleteDuplicate, Loc: Loc{Entity: r.Entity}, ID: r.ID, End: r.End})
}

// Len returns the number of changes in the batch.
func (b *Batch) Len() int { return len(b.Ops) + len(b.Hist) }

// Reset empties the batch for reuse.
func (b *Batch) Reset() {
	clear(b.Ops)
	b.Ops = b.Ops[:0]
	clear(b.Hist)
	b.Hist = b.Hist[:0]
}

// Loader receives the stored state at start, in this order: entities (by
// id), then sequences, then session states in (entity, session id) order,
// then duplicate-detection records in (entity, End, id) order, then messages
// in (entity, sub-queue, sequence) order. Everything after the entities
// names an entity by id, so a loader can resolve it; a record of an entity
// that was not handed over (deleted by a store version that kept the record)
// is the loader's to ignore. Expired duplicate-detection records are handed
// over too: the store does not know the time, and the engine deletes them.
type Loader interface {
	Entity(rec EntityRecord) error
	Sequence(entity uint32, last int64) error
	// SessionState hands over a session's state and when it was set (unix
	// nanoseconds; 0 when not known, as for states stored before the time
	// was).
	SessionState(entity uint32, sessionID string, state []byte, updated int64) error
	Duplicate(r DuplicateRecord) error
	Message(loc Loc, meta Meta) error
}

// Pending is a batch that has been applied in order but may not be on disk
// yet. Wait returns when it is durable (at once for a memory store).
type Pending interface {
	Wait() error
}

// Store keeps entities and messages. Implementations are safe for concurrent
// use.
type Store interface {
	// Load hands the stored state to l.
	Load(l Loader) error
	// Get returns the stored message at loc, with State and DeliveryCount
	// taken from its current Meta. The result must not be changed (Clone it).
	// A missing message is broker.ErrMessageNotFound.
	Get(loc Loc) (*broker.Message, error)
	// Bodies reads the messages at locs as they were put: unlike Get, their
	// State and DeliveryCount are those of the put, not of the current Meta
	// (callers that know them set them). out[i] receives locs[i]'s message,
	// or nil when it is not stored; out must be at least as long as locs.
	// The results must not be changed (Clone them): the engine hands them
	// to receivers as they are (broker.Delivery). Reading neighbours
	// together is cheaper than as many Gets.
	Bodies(locs []Loc, out []*broker.Message) error
	// Apply applies b atomically and in order with every other Apply; the
	// changes are visible to Get when Apply returns. A durable store
	// shares one disk sync among concurrent batches (group commit): Wait on
	// the result before acknowledging anything that must survive a crash.
	Apply(b *Batch) (Pending, error)
	// History returns the stored history of message (k.Entity, k.Seq): its
	// events oldest first, and the index of the first (the number of events
	// folded away before it). A message without history has none. Event
	// 0 kept in the message's record (PutMessageWithHistory) is read from
	// there, in whichever sub-queue the message is.
	History(k HistoryKey) (first uint16, events []HistoryEvent, err error)
	// Durable reports whether the store survives a restart.
	Durable() bool
	// Close flushes and closes the store.
	Close() error
}

// Done is a Pending that is already durable.
type Done struct{}

// Wait returns nil.
func (Done) Wait() error { return nil }
