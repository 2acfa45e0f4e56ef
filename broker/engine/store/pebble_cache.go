package store

import (
	"math/bits"
	"sync"

	"github.com/peeklock/peeklock/broker"
)

// bodyCache keeps the messages of the Pebble store's latest puts in memory,
// by location, so that a body read soon after its send (a queue whose
// receivers keep up, the usual case) costs a map lookup instead of a seek
// through Pebble's memtable and levels, a decode and a copy of the body.
// It holds the message the batch put, as the memory store does: the caller
// does not change it after the put, and readers of Bodies do not change
// what they get (see Store.Bodies), so the cached message and the one
// Pebble would decode are the same message.
//
// It holds about max bytes (see cacheCost); the oldest put leaves first. A
// message deleted or put again leaves at once. Its entries are the puts of
// this process only: a store opened again starts empty, and reads from
// Pebble what it does not hold.
type bodyCache struct {
	mu    sync.Mutex
	m     map[locKey]cacheEntry
	ring  []cachedPut // the puts in order, oldest at head; see evict
	head  int
	n     int
	bytes int64
	max   int64
	// stripes order the Applies that touch one entity's messages, so that
	// the cache learns their changes in the order Pebble made them (see
	// Pebble.Apply).
	stripes [cacheStripes]sync.Mutex
	// seqs and loaded are what planDeletes needs (see singleDeletes).
	seqs   map[uint32]int64
	loaded bool
}

// cacheEntry is a cached message, with what the store knows of its keys:
// onceBody and onceMeta say that the body's or the meta's key was set once
// only since it was last deleted (see singleDeletes).
type cacheEntry struct {
	msg  *broker.Message
	once uint8
}

// cacheEntry.once bits.
const (
	onceBody = 1 << iota
	onceMeta
)

// cachedPut is one put in the cache's ring. Its entry may have left the
// map since (deleted, or replaced by a later put of the same location).
type cachedPut struct {
	key locKey
	msg *broker.Message
}

// cacheStripes is the number of locks that order Applies (by entity id).
const cacheStripes = 64

// cacheOverhead is what a cached message costs beyond its body: the
// message (448 bytes), its map entry and ring slot.
const cacheOverhead = 512

// cacheCost is what a cached message counts against the cache's size.
func cacheCost(m *broker.Message) int64 { return int64(len(m.Body)) + cacheOverhead }

// newBodyCache returns a cache of max bytes, or nil for max <= 0 (none).
func newBodyCache(max int64) *bodyCache {
	if max <= 0 {
		return nil
	}
	return &bodyCache{m: make(map[locKey]cacheEntry), max: max, seqs: make(map[uint32]int64)}
}

// get sets out[i] to the cached message at locs[i], leaving a slot it does
// not hold as it is, and returns how many it set.
func (c *bodyCache) get(locs []Loc, out []*broker.Message) int {
	hits := 0
	c.mu.Lock()
	for i, loc := range locs {
		if e, ok := c.m[keyOf(loc)]; ok {
			out[i] = e.msg
			hits++
		}
	}
	c.mu.Unlock()
	return hits
}

// stripeSet returns the stripes of the entities whose messages b puts or
// deletes, one bit each.
func stripeSet(b *Batch) uint64 {
	var set uint64
	for i := range b.Ops {
		switch op := &b.Ops[i]; op.Kind {
		case OpPutMessage, OpDeleteMessage, OpDeleteEntity:
			set |= 1 << (op.Loc.Entity % cacheStripes)
		}
	}
	return set
}

// lockStripes takes the stripes of set in ascending order.
func (c *bodyCache) lockStripes(set uint64) {
	for ; set != 0; set &= set - 1 { // the lowest bit left, then the next
		c.stripes[bits.TrailingZeros64(set)].Lock()
	}
}

// unlockStripes releases the stripes of set.
func (c *bodyCache) unlockStripes(set uint64) {
	for ; set != 0; set &= set - 1 {
		c.stripes[bits.TrailingZeros64(set)].Unlock()
	}
}

// after learns b's changes once Pebble has committed them; plan is what
// planDeletes said of b (which forgot, ahead of the commit, what b puts
// again or deletes).
func (c *bodyCache) after(b *Batch, plan []uint8) {
	c.mu.Lock()
	put := false // a delete after a put of b may delete what b put
	for i := range b.Ops {
		switch op := &b.Ops[i]; op.Kind {
		case OpPutMessage:
			put = true
			k := keyOf(op.Loc)
			var once uint8
			if plan[i]&planFresh != 0 {
				once = onceBody | onceMeta
			}
			n := len(c.m)
			c.m[k] = cacheEntry{msg: op.Message, once: once}
			if len(c.m) == n { // replaced the put of an earlier op of b
				c.bytes -= cacheCost(earlierPut(b, i))
			}
			c.bytes += cacheCost(op.Message)
			c.push(cachedPut{key: k, msg: op.Message})
		case OpPutMeta:
			k := keyOf(op.Loc)
			if e, ok := c.m[k]; ok {
				e.once &^= onceMeta
				c.m[k] = e
			}
		case OpDeleteMessage:
			if put {
				c.remove(keyOf(op.Loc))
			}
		case OpDeleteEntity:
			for k := range c.m {
				if k.entity() == op.Loc.Entity {
					c.remove(k)
				}
			}
		}
	}
	c.evict()
	c.mu.Unlock()
}

// earlierPut returns the message of the last put before op i of b at the
// location op i puts.
func earlierPut(b *Batch, i int) *broker.Message {
	for j := i - 1; j >= 0; j-- {
		if op := &b.Ops[j]; op.Kind == OpPutMessage && op.Loc == b.Ops[i].Loc {
			return op.Message
		}
	}
	panic("store: a cache entry replaced without an earlier put")
}

// remove forgets the message at k and returns its entry; c.mu is held.
func (c *bodyCache) remove(k locKey) cacheEntry {
	e, ok := c.m[k]
	if ok {
		delete(c.m, k)
		c.bytes -= cacheCost(e.msg)
	}
	return e
}

// push appends p to the ring, growing it when full; c.mu is held.
func (c *bodyCache) push(p cachedPut) {
	if c.n == len(c.ring) {
		grown := make([]cachedPut, max(2*len(c.ring), 64))
		for i := range c.n {
			grown[i] = c.ring[(c.head+i)%len(c.ring)]
		}
		c.ring, c.head = grown, 0
	}
	c.ring[(c.head+c.n)%len(c.ring)] = p
	c.n++
}

// evict drops the oldest puts while the cache is over its size, and the
// ring's leading puts that have left the map already; c.mu is held. The
// ring holds at most one put per cacheOverhead bytes of the size: when a
// message stays while many after it come and go (a lock held long), the
// puts of the gone ones would otherwise pile up behind it.
func (c *bodyCache) evict() {
	for c.n > 0 {
		p := &c.ring[c.head]
		live := c.m[p.key].msg == p.msg
		if live && c.bytes <= c.max && int64(c.n)*cacheOverhead <= c.max {
			return
		}
		if live {
			c.remove(p.key)
		}
		*p = cachedPut{}
		c.head = (c.head + 1) % len(c.ring)
		c.n--
	}
}
