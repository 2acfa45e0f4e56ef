package engine

// lockQueue holds the locked messages whose locks expire on their own (a
// lock its session covers has no expiry of its own), for the sweeper to
// take in expiry order.
//
// Every lock of an entity lasts its LockDuration from the moment it is
// taken or renewed, so a lock taken later expires later: numbered in the
// order they were taken, the locks are in expiry order too. They are kept by
// that number in a seqSet, where taking a lock, settling it and expiring it
// each write one slot; a B-tree ordered by expiry time shifted a leaf per
// change. A lock that would expire before one taken earlier (the wall clock
// stepped back, the entity's LockDuration was shortened) goes to a B-tree
// by (expiry, seq) instead, so the order holds whatever the clock does.
//
// An entry's lockNo is its number while it is in ordered, 0 otherwise.
type lockQueue struct {
	ordered *seqSet // by lock number, and so by expiry
	odd     *tree   // by (at, seq): locks that expire before an earlier-numbered one
	next    int64   // the last lock number given
	lastAt  int64   // the expiry of the last-numbered lock
}

func newLockQueue() *lockQueue {
	return &lockQueue{ordered: newSeqSet(), odd: newAtTree()}
}

// Set adds x, locked until x.at.
func (q *lockQueue) Set(x *entry) {
	if x.at < q.lastAt {
		q.odd.Set(x)
		return
	}
	q.next++
	x.lockNo, q.lastAt = q.next, x.at
	q.ordered.put(x.lockNo, x)
}

// Delete removes x, if it is there; x.at must be what it was when x was
// added.
func (q *lockQueue) Delete(x *entry) {
	if x.lockNo != 0 {
		q.ordered.remove(x.lockNo)
		x.lockNo = 0
		return
	}
	if q.odd.Len() > 0 {
		q.odd.Delete(x)
	}
}

// Min returns the lock that expires first.
func (q *lockQueue) Min() (*entry, bool) {
	x, ok := q.ordered.Min()
	if y, oddOK := q.odd.Min(); oddOK && (!ok || byAt(y, x)) {
		return y, true
	}
	return x, ok
}

// Len returns the number of locks.
func (q *lockQueue) Len() int { return q.ordered.Len() + q.odd.Len() }
