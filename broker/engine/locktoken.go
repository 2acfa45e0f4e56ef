package engine

import (
	"encoding/binary"

	"github.com/peeklock/peeklock/broker"
)

// newToken returns a random version 4 UUID from the entity's ChaCha8 stream:
// unguessable, and far cheaper than reading crypto/rand per lock. Sessions
// take their lock tokens here; a message's lock takes lockToken's.
func (en *entity) newToken() broker.LockToken {
	var t broker.LockToken
	for t.IsZero() {
		binary.LittleEndian.PutUint64(t[0:8], en.rng.Uint64())
		binary.LittleEndian.PutUint64(t[8:16], en.rng.Uint64())
		t[6] = t[6]&0x0f | 0x40
		t[8] = t[8]&0x3f | 0x80
	}
	return t
}

// A message's lock token names the message: it is a version 4 UUID whose
// first 56 bits not taken by the version are random (so that it cannot be
// guessed, and a new lock on the same message gets a new token), whose
// version byte's low nibble is the sub-queue, and whose last 62 bits (after
// the variant) are the sequence number. A settlement or a renewal then finds
// the entry in its sub-queue's index of locked messages by sequence number
// and compares the whole token, where a map from tokens to entries cost an
// insert and a delete per lock (about a tenth of the engine's loop).
const (
	tokenSeqBits = 62
	tokenSeqMask = 1<<tokenSeqBits - 1
)

// lockToken returns a new lock token for x (see above).
func (en *entity) lockToken(x *entry) broker.LockToken {
	var t broker.LockToken
	binary.LittleEndian.PutUint64(t[0:8], en.rng.Uint64())
	t[6] = 0x40 | byte(x.sub)&0x0f
	binary.BigEndian.PutUint64(t[8:16], uint64(x.seq)&tokenSeqMask)
	t[8] = t[8]&0x3f | 0x80
	return t
}

// tokenLoc returns the sub-queue and the sequence number a message's lock
// token names; ok is false for a token lockToken cannot have made.
func tokenLoc(t broker.LockToken) (sub broker.SubQueue, seq int64, ok bool) {
	if t[6]&0xf0 != 0x40 || t[8]&0xc0 != 0x80 {
		return 0, 0, false
	}
	sub = broker.SubQueue(t[6] & 0x0f)
	if int(sub) >= numSubQueues {
		return 0, 0, false
	}
	return sub, int64(binary.BigEndian.Uint64(t[8:16]) & tokenSeqMask), true
}

// lockedBy returns the locked message that token t is the lock of, or nil
// (an unknown token, or a lock that ended). Called with en locked.
func (en *entity) lockedBy(t broker.LockToken) *entry {
	sub, seq, ok := tokenLoc(t)
	if !ok {
		return nil
	}
	x, found := en.q[sub].locked.Get(seq)
	if !found || x.token != t {
		return nil
	}
	return x
}
