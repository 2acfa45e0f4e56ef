package remote

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
)

// forgetLostAfter is how long a lost lock is remembered (so that settling it
// says "lost" rather than "unknown").
const forgetLostAfter = 10 * time.Minute

// heldLock is a lock this client took by receiving a message under
// peek-lock (or, on a generic broker, by holding a delivery unsettled).
type heldLock struct {
	token   broker.LockToken
	address string // as received: "q", "q/$DeadLetterQueue", "q/$Transfer/$DeadLetterQueue"
	gen     uint64 // the connection it was taken on
	rl      *receiveLink
	raw     *amqp.Message // the delivery, for settling on rl
	// byNumber marks a deferred message received by sequence number under
	// the session lock of rl: it is settled through the management node
	// (naming rl), and lost with the session lock.
	byNumber bool
	msg      *broker.Message
	lostWhy  string
	lostAt   time.Time
	busy     bool // a settlement is in flight
}

// heldLocks is the table of locks this client holds, by token.
type heldLocks struct {
	mu sync.Mutex
	m  map[broker.LockToken]*heldLock
}

func (h *heldLocks) init() { h.m = make(map[broker.LockToken]*heldLock) }

// add records a lock.
func (h *heldLocks) add(l *heldLock, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for t, x := range h.m {
		if x.lostWhy != "" && now.Sub(x.lostAt) > forgetLostAfter {
			delete(h.m, t)
		}
	}
	h.m[l.token] = l
}

// begin returns a copy of the lock with token and marks a settlement in
// flight; busy is true (and nothing is marked) when one is in flight
// already.
func (h *heldLocks) begin(t broker.LockToken) (l heldLock, found, busy bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.m[t]
	if p == nil {
		return heldLock{}, false, false
	}
	if p.busy {
		return *p, true, true
	}
	p.busy = true
	return *p, true, false
}

// snapshot returns a copy of the lock with token.
func (h *heldLocks) snapshot(t broker.LockToken) (heldLock, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.m[t]
	if p == nil {
		return heldLock{}, false
	}
	return *p, true
}

// end clears the in-flight mark of a settlement that left the lock held.
func (h *heldLocks) end(t broker.LockToken) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l, ok := h.m[t]; ok {
		l.busy = false
	}
}

// tokens returns the tokens of the locks held and not lost.
func (h *heldLocks) tokens() []broker.LockToken {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]broker.LockToken, 0, len(h.m))
	for t, l := range h.m {
		if l.lostWhy == "" {
			out = append(out, t)
		}
	}
	return out
}

// remove forgets the lock with token.
func (h *heldLocks) remove(t broker.LockToken) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, t)
}

// setLockedUntil records a renewal.
func (h *heldLocks) setLockedUntil(t broker.LockToken, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l, ok := h.m[t]; ok {
		l.msg.LockedUntil = until
	}
}

// loseConnection handles the end of connection gen and returns how many of
// its locks were lost. On Service Bus (viaManagement) a message lock
// outlives its connection: it is kept, to be settled by lock token through
// the management node of the next connection (backup settlement, as the SDKs
// do). A lock under a session lock goes with the session lock, and a generic
// broker's delivery cannot be settled again: those are lost.
func (h *heldLocks) loseConnection(gen uint64, viaManagement bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.m {
		if l.gen != gen || l.lostWhy != "" {
			continue
		}
		if viaManagement && !l.byNumber && (l.rl == nil || l.rl.sessionID == "") {
			l.rl, l.raw = nil, nil
			continue
		}
		l.lostWhy = "the lock was held on a connection that dropped"
		l.lostAt = time.Now()
		n++
	}
	return n
}

// loseLink handles a receive link that closed while the connection lives:
// on Service Bus its locks can still be settled through the management
// node (rl becomes nil); on a generic broker, and on a session link (whose
// session lock went with it), they are lost.
func (h *heldLocks) loseLink(rl *receiveLink, viaManagement bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.m {
		if l.rl != rl {
			continue
		}
		if rl.sessionID != "" && l.lostWhy == "" {
			l.lostWhy = "the lock of session " + quoteSession(rl.sessionID) + " it was received under was given back or lost"
			l.lostAt = time.Now()
		} else if viaManagement {
			l.rl, l.raw = nil, nil
		} else if l.lostWhy == "" {
			l.lostWhy = "the link it was received on closed"
			l.lostAt = time.Now()
		}
	}
}

// held returns copies of the live locks taken from address (compared
// without regard to case) and not expired at now, in sequence order.
func (h *heldLocks) held(address string, now time.Time) []*broker.Message {
	h.mu.Lock()
	var out []*broker.Message
	for _, l := range h.m {
		if l.lostWhy != "" || !strings.EqualFold(l.address, address) {
			continue
		}
		if !l.msg.LockedUntil.IsZero() && !l.msg.LockedUntil.After(now) {
			continue
		}
		out = append(out, l.msg.Clone())
	}
	h.mu.Unlock()
	slices.SortFunc(out, func(a, b *broker.Message) int {
		switch {
		case a.SequenceNumber < b.SequenceNumber:
			return -1
		case a.SequenceNumber > b.SequenceNumber:
			return 1
		}
		return 0
	})
	return out
}
