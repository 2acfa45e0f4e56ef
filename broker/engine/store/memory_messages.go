package store

import (
	"math/bits"
	"sync"

	"github.com/peeklock/peeklock/broker"
)

// memoryMessages holds the memory store's message records by location:
// pages of recordPageSize consecutive sequence numbers of one entity's
// sub-queue, in a map by the page's first location. A queue's messages are
// put at the end of its sequence and mostly deleted from the front, so a
// put or a delete writes a slot of the page used last, and the map is
// touched once per page: a map by message (an insert and a delete per
// message, and a lookup per read) was a tenth of the engine's in-memory
// loop, and more with more messages in flight, as the map grew.
//
// The records are kept by value, so that a put writes a slot instead of
// allocating a record (an allocation per message was 5% of the engine's
// in-memory loop, in its own time and the collector's). A page is full (a
// slot for each of its locations: 2,304 bytes, a size class, for 16
// records of 136 bytes) or short: the records of its used slots only, in
// slot order, with room for 1, 2, 4 or 8. A new page is full when an
// emptied full page is at hand (the steady loop) or when the put follows a
// stored record (a queue filling up); otherwise it is short, and doubles
// its room, or becomes full, as records arrive. A page that thins out to
// half its room or less (a new full page is thin too) is shrunk into the
// least room that holds its records, but only thinDelay puts and deletes
// later, if it is still thin: a queue drained from the front takes every
// page through one record before it empties, and shrinking it then would
// allocate a page per page drained. A full page that empties is kept as a
// spare for the next new page, so the steady loop allocates nothing.
//
// Measured per record (TestMemoryBytesPerRecord, records of 136 bytes):
// 146 bytes when the pages are full; 211 for records 16 apart, 177 for 8
// apart, 213 for every 16th record left of a full queue, and at worst 261
// (9 of every 16 left, in full pages; 241 for 5 of 16, in pages of 8).
// Records by pointer in pages of 32 pointers cost 106 to 257 (16 apart);
// full pages alone cost 2,339 for records 16 apart.
//
// The memory store keeps a memoryMessages per entity (see memoryShard);
// they share their spare pages (sparePages), so that a thousand queues keep
// no more spares than one.
//
// A *memoryRecord that get or put returns points into its page: it is good
// until the next put, delete or deleteEntity, as a write may move the
// records of a short page, or move a page's records to another page, and
// an emptied page is reused for other locations, so nothing may keep one
// past its shard's mutex. Writes (put, delete, deleteEntity, shrinkThin)
// need that mutex held for writing; get, all and bodies only read, under
// the read lock.
type memoryMessages struct {
	pages    map[locKey]*recordPage // by the location of slot 0
	last     *recordPage            // the page written last; nil after it emptied
	lastBase locKey
	spares   *sparePages
	ops      uint64     // puts and deletes so far, the store's count when behind it (see catchUp)
	thin     []thinPage // pages that were thin, oldest first, from thin[thinHead]
	thinHead int
}

// sparePages is emptied full pages, every slot zero, for the next new
// ones: at most maxSpares, under their own mutex, as the entities that
// share them are written at once.
type sparePages struct {
	mu    sync.Mutex
	pages []*recordPage
}

// get returns a spare page, or nil.
func (s *sparePages) get() *recordPage {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.pages)
	if n == 0 {
		return nil
	}
	p := s.pages[n-1]
	s.pages[n-1] = nil
	s.pages = s.pages[:n-1]
	return p
}

// keep keeps the emptied full page p as a spare, unless there are
// maxSpares already.
func (s *sparePages) keep(p *recordPage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pages) < maxSpares {
		s.pages = append(s.pages, p)
	}
}

const (
	recordPageBits = 4
	recordPageSize = 1 << recordPageBits
	// maxSpares is the most emptied pages kept: a batch's worth in a few
	// queues.
	maxSpares = 8
	// thinDelay is how many puts and deletes after a page was found thin
	// it is shrunk, if it is still thin: enough for a page drained from
	// the front to empty (8 deletes), and a new one filled from the back
	// to fill, with a hundred queues at work a message at a time in turn,
	// or more a batch at a time. The pages shrunk late cost at most
	// thinDelay/8 full pages (300 KB) more than the bound.
	thinDelay = 1024
)

// recordPage is the records of recordPageSize consecutive locations. A
// full page has a slot per location, recs[i] for location i, and an empty
// slot is zero; a short page has the records of its used slots, in slot
// order, and the rest of its room (up to cap(recs)) is zero.
type recordPage struct {
	used uint32 // bit i: location i holds a record
	recs []memoryRecord
}

// The pages, each one allocation: recs points into the page's own array.
type (
	fullPage struct {
		recordPage
		slots [recordPageSize]memoryRecord
	}
	shortPage1 struct {
		recordPage
		slots [1]memoryRecord
	}
	shortPage2 struct {
		recordPage
		slots [2]memoryRecord
	}
	shortPage4 struct {
		recordPage
		slots [4]memoryRecord
	}
	shortPage8 struct {
		recordPage
		slots [8]memoryRecord
	}
)

// newPage returns an empty page with room for n records: a full page for
// recordPageSize, a short one for 1, 2, 4 or 8 (fewer than
// recordPageSize).
func newPage(n int) *recordPage {
	switch {
	case n >= recordPageSize:
		p := new(fullPage)
		p.recs = p.slots[:]
		return &p.recordPage
	case n == 1:
		p := new(shortPage1)
		p.recs = p.slots[:0]
		return &p.recordPage
	case n == 2:
		p := new(shortPage2)
		p.recs = p.slots[:0]
		return &p.recordPage
	case n == 4:
		p := new(shortPage4)
		p.recs = p.slots[:0]
		return &p.recordPage
	}
	p := new(shortPage8)
	p.recs = p.slots[:0]
	return &p.recordPage
}

// thinPage is a page that was thin when the store had done at puts and
// deletes.
type thinPage struct {
	base locKey
	p    *recordPage
	at   uint64
}

func (p *recordPage) has(i int) bool { return p.used&(1<<i) != 0 }

func (p *recordPage) full() bool { return len(p.recs) == recordPageSize }

// count returns the number of records in p.
func (p *recordPage) count() int { return bits.OnesCount32(p.used) }

// thin reports whether p holds half its room or less.
func (p *recordPage) thin() bool { return p.count() <= cap(p.recs)/2 }

// slot returns the record of location i, which p holds.
func (p *recordPage) slot(i int) *memoryRecord {
	if p.full() {
		return &p.recs[i]
	}
	return &p.recs[p.rank(i)]
}

// rank returns where a short page keeps the record of location i: the
// number of its records before it.
func (p *recordPage) rank(i int) int { return bits.OnesCount32(p.used & (1<<i - 1)) }

// newMemoryMessages returns an empty memoryMessages with spares of its own.
func newMemoryMessages() memoryMessages {
	return newMemoryMessagesSharing(&sparePages{})
}

// newMemoryMessagesSharing returns an empty memoryMessages that takes its
// spare pages from, and gives them back to, spares.
func newMemoryMessagesSharing(spares *sparePages) memoryMessages {
	return memoryMessages{pages: make(map[locKey]*recordPage), spares: spares}
}

// pageOf returns the location of the first slot of k's page, and k's slot.
func pageOf(k locKey) (locKey, int) {
	return locKey{k[0], k[1] &^ (recordPageSize - 1)}, int(k[1] & (recordPageSize - 1))
}

// get returns the record at k, or nil.
func (m *memoryMessages) get(k locKey) *memoryRecord {
	base, i := pageOf(k)
	p := m.pages[base]
	if p == nil || !p.has(i) {
		return nil
	}
	return p.slot(i)
}

// page returns the page of base for a write, or nil.
func (m *memoryMessages) page(base locKey) *recordPage {
	if m.last != nil && m.lastBase == base {
		return m.last
	}
	p := m.pages[base]
	if p != nil {
		m.last, m.lastBase = p, base
	}
	return p
}

// install makes p the page of base.
func (m *memoryMessages) install(base locKey, p *recordPage) {
	m.pages[base] = p
	m.last, m.lastBase = p, base
	if p.full() && p.thin() {
		m.markThin(base, p)
	}
}

// put returns the slot of k, emptied (zero), for the caller to fill in.
func (m *memoryMessages) put(k locKey) *memoryRecord {
	m.tick()
	base, i := pageOf(k)
	p := m.page(base)
	switch {
	case p == nil:
		// A spare is full; a queue filling up has the record before k
		// (when its page is not this one, it was looked up once for the
		// page).
		if p = m.spares.get(); p == nil {
			if i == 0 && k[1] > 0 && m.get(locKey{k[0], k[1] - 1}) != nil {
				p = newPage(recordPageSize)
			} else {
				p = newPage(1)
			}
		}
		m.install(base, p)
	case p.has(i):
		r := p.slot(i)
		*r = memoryRecord{}
		return r
	case !p.full() && len(p.recs) == cap(p.recs):
		p = m.grow(base, p)
	}
	p.used |= 1 << i
	if p.full() {
		return &p.recs[i]
	}
	j := p.rank(i)
	p.recs = p.recs[:len(p.recs)+1]
	copy(p.recs[j+1:], p.recs[j:])
	p.recs[j] = memoryRecord{}
	return &p.recs[j]
}

// grow moves the records of the short page p of base, which has no room
// left, to a page with twice the room (a spare full page, if there is
// one), and returns that page.
func (m *memoryMessages) grow(base locKey, p *recordPage) *recordPage {
	q := m.spares.get()
	if q == nil {
		q = newPage(min(2*cap(p.recs), recordPageSize))
	}
	m.move(q, p)
	m.install(base, q)
	return q
}

// move moves the records of p to the empty page q, and empties p.
func (m *memoryMessages) move(q, p *recordPage) {
	q.used = p.used
	j := 0
	for used := p.used; used != 0; used &= used - 1 {
		i := bits.TrailingZeros32(used)
		if !p.full() {
			i, j = j, j+1
		}
		if q.full() {
			q.recs[bits.TrailingZeros32(used)] = p.recs[i]
		} else {
			q.recs = append(q.recs, p.recs[i])
		}
		p.recs[i] = memoryRecord{}
	}
	p.used = 0
	if !p.full() {
		p.recs = p.recs[:0]
	}
}

// delete removes the record at k, if there is one.
func (m *memoryMessages) delete(k locKey) {
	m.tick()
	base, i := pageOf(k)
	p := m.page(base)
	if p == nil || !p.has(i) {
		return
	}
	if p.full() {
		p.recs[i] = memoryRecord{} // drops the message for the collector
	} else {
		j := p.rank(i)
		n := len(p.recs)
		copy(p.recs[j:], p.recs[j+1:])
		p.recs[n-1] = memoryRecord{}
		p.recs = p.recs[:n-1]
	}
	p.used &^= 1 << i
	switch n := p.count(); {
	case n == 0:
		delete(m.pages, base)
		if m.last == p {
			m.last = nil
		}
		if p.full() {
			m.spares.keep(p) // every slot is zero again
		}
	case n == cap(p.recs)/2:
		m.markThin(base, p)
	}
}

// markThin notes that the page p of base is thin, to be shrunk thinDelay
// puts and deletes from now if it still is.
func (m *memoryMessages) markThin(base locKey, p *recordPage) {
	m.thin = append(m.thin, thinPage{base, p, m.ops})
}

// tick counts a put or a delete, and shrinks the pages that were thin
// thinDelay of them ago and still are.
func (m *memoryMessages) tick() {
	m.ops++
	if m.thinHead < len(m.thin) && m.ops-m.thin[m.thinHead].at >= thinDelay {
		m.shrinkThin(m.ops - thinDelay)
	}
}

// waiting reports whether pages wait to be shrunk.
func (m *memoryMessages) waiting() bool { return m.thinHead < len(m.thin) }

// catchUp sets the count of puts and deletes to ops when it is behind: the
// memory store counts them across its entities, so that an entity's thin
// pages come due with the others' work too (see Memory.sweepThin).
func (m *memoryMessages) catchUp(ops uint64) { m.ops = max(m.ops, ops) }

// shrinkThin shrinks the pages found thin at or before at puts and deletes
// that are still thin, into short pages with the least room that holds
// their records.
func (m *memoryMessages) shrinkThin(at uint64) {
	for ; m.thinHead < len(m.thin) && m.thin[m.thinHead].at <= at; m.thinHead++ {
		t := &m.thin[m.thinHead]
		p := t.p
		t.p = nil
		if p == nil || m.pages[t.base] != p || !p.thin() {
			continue // emptied, shrunk, filled or its entity deleted since
		}
		q := newPage(1 << bits.Len(uint(p.count()-1)))
		m.move(q, p)
		m.pages[t.base] = q
		if m.last == p {
			m.last = q
		}
		if p.full() {
			m.spares.keep(p)
		}
	}
	if m.thinHead == len(m.thin) {
		m.thin, m.thinHead = m.thin[:0], 0
	} else if m.thinHead >= 256 && 2*m.thinHead >= len(m.thin) {
		n := copy(m.thin, m.thin[m.thinHead:])
		clear(m.thin[n:])
		m.thin, m.thinHead = m.thin[:n], 0
	}
}

// deleteEntity removes every record of entity id, and lets go of its
// pages that wait to be shrunk.
func (m *memoryMessages) deleteEntity(id uint32) {
	for base, p := range m.pages {
		if base.entity() == id {
			delete(m.pages, base)
			if m.last == p {
				m.last = nil
			}
		}
	}
	for i := m.thinHead; i < len(m.thin); i++ {
		if m.thin[i].base.entity() == id {
			m.thin[i].p = nil
		}
	}
}

// len returns the number of records.
func (m *memoryMessages) len() int {
	n := 0
	for _, p := range m.pages {
		n += p.count()
	}
	return n
}

// all calls fn for every record, in no order.
func (m *memoryMessages) all(fn func(k locKey, r *memoryRecord)) {
	for base, p := range m.pages {
		j := 0
		for used := p.used; used != 0; used &= used - 1 {
			i := bits.TrailingZeros32(used)
			r := &p.recs[j]
			if p.full() {
				r = &p.recs[i]
			}
			j++
			fn(locKey{base[0], base[1] + uint64(i)}, r)
		}
	}
}

// bodies sets out[i] to the message at locs[i], or nil, looking each page
// up once for a run of locations on it.
func (m *memoryMessages) bodies(locs []Loc, out []*broker.Message) {
	var base locKey
	var p *recordPage
	for i, loc := range locs {
		b, j := pageOf(keyOf(loc))
		if i == 0 || b != base {
			base, p = b, m.pages[b]
		}
		out[i] = nil
		if p != nil && p.has(j) {
			out[i] = p.slot(j).msg
		}
	}
}
