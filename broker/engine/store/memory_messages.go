package store

import (
	"math/bits"

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
// The records are kept by value in their pages, so that a put writes a
// slot instead of allocating a record (an allocation per message was 5% of
// the engine's in-memory loop, in its own time and the collector's). A
// page costs its slots however few records it holds: 2,304 bytes (a size
// class) for 16 records of 136 bytes. Measured per record: 143 bytes when
// the pages are full (153, with a first history event, when each record
// was allocated and its pointer kept in a page of 32) and, at worst
// (records at least recordPageSize apart), about 2,350 bytes (476 with
// records by pointer). Pages of 32 would touch the map half as often and
// double that worst case; pages of 8 halve it, at 20 more bytes allocated
// per message in the engine's loop (the map grows and shrinks more often).
//
// A *memoryRecord that get or put returns points into its page: it is good
// until the next put, delete or deleteEntity, as a delete empties the slot
// and an emptied page is reused for other locations, so nothing may keep
// one past the store's mutex. Writes (put, delete, deleteEntity) need that
// mutex held for writing; get, all and bodies only read, under the read
// lock.
type memoryMessages struct {
	pages    map[locKey]*recordPage // by the location of slot 0
	last     *recordPage            // the page written last; nil after it emptied
	lastBase locKey
	spares   []*recordPage // emptied pages, every slot zero, for the next new ones
}

const (
	recordPageBits = 4
	recordPageSize = 1 << recordPageBits
	// maxSpares is the most emptied pages kept: a batch's worth in a few
	// queues.
	maxSpares = 8
)

// recordPage is the records of recordPageSize consecutive locations. An
// empty slot is zero.
type recordPage struct {
	used uint32 // bit i: recs[i] holds a record
	recs [recordPageSize]memoryRecord
}

func (p *recordPage) has(i int) bool { return p.used&(1<<i) != 0 }

func newMemoryMessages() memoryMessages {
	return memoryMessages{pages: make(map[locKey]*recordPage)}
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
	return &p.recs[i]
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

// put returns the slot of k, emptied (zero), for the caller to fill in.
func (m *memoryMessages) put(k locKey) *memoryRecord {
	base, i := pageOf(k)
	p := m.page(base)
	if p == nil {
		if n := len(m.spares); n > 0 {
			p, m.spares = m.spares[n-1], m.spares[:n-1]
		} else {
			p = new(recordPage)
		}
		m.pages[base] = p
		m.last, m.lastBase = p, base
	}
	r := &p.recs[i]
	if p.has(i) {
		*r = memoryRecord{}
	}
	p.used |= 1 << i
	return r
}

// delete removes the record at k, if there is one.
func (m *memoryMessages) delete(k locKey) {
	base, i := pageOf(k)
	p := m.page(base)
	if p == nil || !p.has(i) {
		return
	}
	p.recs[i] = memoryRecord{} // drops the message for the collector
	if p.used &^= 1 << i; p.used == 0 {
		delete(m.pages, base)
		if m.last == p {
			m.last = nil
		}
		if len(m.spares) < maxSpares {
			m.spares = append(m.spares, p) // every slot is zero again
		}
	}
}

// deleteEntity removes every record of entity id.
func (m *memoryMessages) deleteEntity(id uint32) {
	for base, p := range m.pages {
		if base.entity() == id {
			delete(m.pages, base)
			if m.last == p {
				m.last = nil
			}
		}
	}
}

// len returns the number of records.
func (m *memoryMessages) len() int {
	n := 0
	for _, p := range m.pages {
		n += bits.OnesCount32(p.used)
	}
	return n
}

// all calls fn for every record, in no order.
func (m *memoryMessages) all(fn func(k locKey, r *memoryRecord)) {
	for base, p := range m.pages {
		for used := p.used; used != 0; used &= used - 1 {
			i := bits.TrailingZeros32(used)
			fn(locKey{base[0], base[1] + uint64(i)}, &p.recs[i])
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
			out[i] = p.recs[j].msg
		}
	}
}
