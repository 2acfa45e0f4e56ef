package broker

import "context"

// SequenceLocker is implemented by clients that can lock an available
// message by its sequence number (the embedded engine), so that an action
// on one message touches that message only: the dashboard resubmits a
// dead-lettered message by locking exactly it, where a plain Receive would
// have to take (and give back) every message before it. Use
// SequenceLockerOf to find out whether a client has it.
//
// A wrapper that changes what a client may do (ReadOnly, the SSH server's
// per-session client) must implement SequenceLocker itself, refusing or
// recording the lock, since SequenceLockerOf otherwise finds the wrapped
// client's implementation under it.
type SequenceLocker interface {
	// LockSequence locks, under peek-lock, the available (active and
	// unlocked) messages of entity whose sequence numbers are seqs. entity
	// is an address: a sub-queue's carries its suffix (SubQueueAddress).
	// The locks are settled and renewed like those of Receive, and taking
	// them counts no failed delivery. Every number must name an available
	// message; otherwise nothing is locked and the error is
	// ErrMessageNotFound, saying whether another receiver holds it. The
	// main queue of a session-aware entity is refused with CodeInvalid
	// (its messages are locked through their session).
	LockSequence(ctx context.Context, entity string, seqs []int64) ([]*Message, error)
}

// SequenceLockerOf returns the SequenceLocker of c: c itself when it
// implements it, or else the first client that implements it down the
// chain of wrapped clients (Unwrapper), as RulesOf does. ok is false when
// no client in the chain can lock by sequence number; the caller then
// receives from the head of the queue.
func SequenceLockerOf(c Client) (sl SequenceLocker, ok bool) {
	return lookThrough[SequenceLocker](c, false)
}
