package engine

import (
	"github.com/tidwall/btree"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// entry is the engine's compact index record of one stored message: 112
// bytes (a size class of its own) with the headers of its message id and
// session id, plus those strings. The message itself stays in the store.
type entry struct {
	seq      int64
	enqueued int64 // unix ns
	expires  int64 // unix ns; 0: never
	// at is the lock expiry (unix ns) while the message is locked, and the
	// scheduled enqueue time while it is Scheduled; 0 otherwise. A scheduled
	// message is never locked, so one field serves both.
	at    int64
	owner uint64 // lock owner while locked
	// lockNo numbers the lock in its entity's lockQueue (see there); 0
	// when it is not in its ordered set.
	lockNo int64
	token  broker.LockToken // zero: not locked
	size   int32
	// failed counts the deliveries of the main queue that did not settle
	// the message (the AMQP header's delivery-count): abandoned, expired or
	// lost locks, and deferrals (so that receiving a deferred message by
	// sequence number shows one more, as Service Bus counts it). A hand-out
	// does not count, nor does a release, nor anything in a dead-letter
	// sub-queue. A deferral never dead-letters: MaxDeliveryCount applies
	// when a later delivery fails.
	failed uint32
	state  broker.State
	sub    broker.SubQueue
	// gone is set when the entry has left the index for good (settled,
	// deleted, or on its way to another entity).
	gone bool
	// hist counts the events of the message's history (the next event's
	// index); histUnknown for a message loaded from the store. rider is
	// where its newest held event waits in the entity (an index of
	// historyLog.held plus one; 0: none), checked before use: the message's
	// next change writes it, a completion cancels it (see historyLog.rider). Both
	// fit in what was padding. histInline says that event 0 is kept in the message's own
	// record (see store.Batch.PutMessageWithHistory), so that deleting the
	// record deletes it; false for a message loaded from the store, whose
	// event 0 may be a history record of its own.
	histInline bool
	hist       uint16
	rider      uint16
	session    string
	msgID      string
}

func (x *entry) locked() bool { return !x.token.IsZero() }

// deliveryCount is the DeliveryCount that clients see: the failed
// deliveries plus one, as the SDKs show the AMQP header's delivery-count.
func (x *entry) deliveryCount() uint32 { return x.failed + 1 }

func (x *entry) loc(id uint32) store.Loc {
	return store.Loc{Entity: id, Sub: x.sub, Seq: x.seq}
}

// meta returns the store's Meta for x.
func (x *entry) meta() store.Meta {
	m := store.Meta{
		State:         x.state,
		DeliveryCount: x.failed,
		EnqueuedTime:  x.enqueued,
		ExpiresAt:     x.expires,
		Size:          int64(x.size),
		SessionID:     x.session,
		MessageID:     x.msgID,
	}
	if x.state == broker.StateScheduled {
		m.ScheduledTime = x.at
	}
	return m
}

// entryFromMeta rebuilds an index entry from a loaded Meta.
func entryFromMeta(loc store.Loc, m store.Meta) *entry {
	x := &entry{
		seq:      loc.Seq,
		enqueued: m.EnqueuedTime,
		expires:  m.ExpiresAt,
		size:     clampSize(m.Size),
		failed:   m.DeliveryCount,
		state:    m.State,
		sub:      loc.Sub,
		session:  m.SessionID,
		msgID:    m.MessageID,
		hist:     histUnknown,
	}
	if x.state == broker.StateScheduled {
		x.at = m.ScheduledTime
	}
	if x.state > broker.StateScheduled {
		x.state = broker.StateActive
	}
	return x
}

func clampSize(n int64) int32 {
	if n > 1<<31-1 {
		return 1<<31 - 1
	}
	if n < 0 {
		return 0
	}
	return int32(n)
}

// tree is an ordered set of entries by time: by (at, seq) (newAtTree) or by
// (expires, seq) (newExpiryTree). Sets by sequence number are seqSets. The
// engine's own mutexes guard them, so the trees' locking is off.
//
// A tree remembers where its last insert and its last delete went (path
// hints): locks are taken and expire in time order, so most inserts land
// beside the last one and most deletes at the front, and a hint finds the
// spot with a comparison or two instead of a binary search per level.
type tree struct {
	*btree.BTreeG[*entry]
	setHint, deleteHint btree.PathHint
}

// Set inserts or replaces x.
func (t *tree) Set(x *entry) { t.SetHint(x, &t.setHint) }

// Delete removes x.
func (t *tree) Delete(x *entry) { t.DeleteHint(x, &t.deleteHint) }

var treeOpts = btree.Options{NoLocks: true, Degree: 32}

func byAt(a, b *entry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func byExpiry(a, b *entry) bool {
	if a.expires != b.expires {
		return a.expires < b.expires
	}
	return a.seq < b.seq
}

func newTree(less func(a, b *entry) bool) *tree {
	return &tree{BTreeG: btree.NewBTreeGOptions(less, treeOpts)}
}

func newAtTree() *tree     { return newTree(byAt) }
func newExpiryTree() *tree { return newTree(byExpiry) }

// queueIndex holds the unscheduled messages of a main queue or of one of its
// dead-letter sub-queues by category.
type queueIndex struct {
	active   *seqSet // Active and not locked
	locked   *seqSet // locked (any state)
	deferred *seqSet // Deferred and not locked
}

func newQueueIndex() queueIndex {
	return queueIndex{active: newSeqSet(), locked: newSeqSet(), deferred: newSeqSet()}
}

func (q *queueIndex) len() int { return q.active.Len() + q.locked.Len() + q.deferred.Len() }
