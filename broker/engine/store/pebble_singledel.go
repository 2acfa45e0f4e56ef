package store

// Single deletes. A message's body and meta records are mostly set once and
// deleted soon after, while both are still in Pebble's memtable. A delete
// leaves a tombstone that the memtable's flush writes to a table and a
// compaction reads again, to shadow older versions of the key that lower
// levels might hold; Pebble's SingleDelete instead meets the one Set it
// deletes in the flush, and the two vanish there (flushes and compactions
// of such tombstones were a sixth of the durable loop's CPU). It is
// correct only for a key set at most once since it was last deleted: a
// second Set would come back once the first is gone.
//
// So the store single-deletes only keys it knows were set once since their
// last delete, and only from what it saw itself:
//   - a put is fresh when its sequence number is above every sequence
//     number of its entity that a stored record may have: the highest of
//     the metas that Load read (a stored body always has its meta: puts
//     write both, deletes delete both) and of every put since (seqs). A
//     fresh put's keys were set by no record that is still there.
//   - the cache entry of a fresh put carries onceBody|onceMeta; a put of
//     the same location again replaces the entry (not fresh: its number is
//     known), and a meta put clears onceMeta.
//   - a delete single-deletes the keys its cache entry still marks, when
//     its batch puts nothing (a put or meta put of the same message earlier
//     in the batch would be a second Set the entry does not know of).
//
// What the cache does not hold (evicted, put before this process, put
// before Load) is deleted with a tombstone, as before; so is everything
// before Load has run, and everything of a store opened without a cache.

// Plan bits, per op of a batch (see planDeletes).
const (
	planFresh   = 1 << iota // a put of a location no stored record has
	planDelBody             // a delete whose body key is single-deleted
	planDelMeta             // a delete whose meta key is single-deleted
)

// planDeletes returns, in plan (reused), what build and after need to know
// of each op of b, counts b's puts in c.seqs, and forgets, ahead of the
// commit, the cached messages b puts again or deletes: until the commit is
// over a reader gets the stored one, from Pebble. The caller holds b's
// stripes.
func (c *bodyCache) planDeletes(b *Batch, plan []uint8) []uint8 {
	if cap(plan) < len(b.Ops) {
		plan = make([]uint8, len(b.Ops))
	}
	plan = plan[:len(b.Ops)]
	clear(plan)
	puts := false
	for i := range b.Ops {
		switch b.Ops[i].Kind {
		case OpPutMessage, OpPutMeta, OpDeleteEntity:
			puts = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range b.Ops {
		op := &b.Ops[i]
		switch op.Kind {
		case OpPutMessage:
			known, ok := c.seqs[op.Loc.Entity]
			if ok && op.Loc.Seq <= known {
				c.remove(keyOf(op.Loc)) // put again, maybe
				continue
			}
			// Above every number put: the cache holds nothing there.
			c.seqs[op.Loc.Entity] = op.Loc.Seq
			if c.loaded {
				plan[i] |= planFresh
			}
		case OpDeleteMessage:
			e := c.remove(keyOf(op.Loc))
			if puts {
				continue
			}
			if e.once&onceBody != 0 {
				plan[i] |= planDelBody
			}
			if e.once&onceMeta != 0 {
				plan[i] |= planDelMeta
			}
		}
	}
	return plan
}

// loadedSeqs records, after a complete Load, the highest sequence number of
// each entity's stored metas; from then on puts can be fresh.
func (c *bodyCache) loadedSeqs(seqs map[uint32]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, seq := range seqs {
		if known, ok := c.seqs[id]; !ok || seq > known {
			c.seqs[id] = seq
		}
	}
	c.loaded = true
}
