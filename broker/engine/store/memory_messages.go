package store

import "github.com/peeklock/peeklock/broker"

// memoryMessages holds the memory store's message records by location:
// pages of recordPageSize consecutive sequence numbers of one entity's
// sub-queue, in a map by the page's first location. A queue's messages are
// put at the end of its sequence and mostly deleted from the front, so a
// put or a delete writes a slot of the page used last, and the map is
// touched once per page: a map by message (an insert and a delete per
// message, and a lookup per read) was a tenth of the engine's in-memory
// loop, and more with more messages in flight, as the map grew. A page
// costs its slots however few records it holds: at worst (records at least
// recordPageSize apart) about 270 bytes per record, as the engine's
// seqSet.
//
// Writes (put, delete, clear) need the store's mutex held for writing;
// get only reads, under the read lock.
type memoryMessages struct {
	pages    map[locKey]*recordPage // by the location of slot 0
	last     *recordPage            // the page written last; nil after it emptied
	lastBase locKey
	spares   []*recordPage // emptied pages, for the next new ones
}

const (
	recordPageBits = 5
	recordPageSize = 1 << recordPageBits
	// maxSpares is the most emptied pages kept: a batch's worth in a few
	// queues.
	maxSpares = 8
)

// recordPage is the records of recordPageSize consecutive locations.
type recordPage struct {
	n    int // the records in recs
	recs [recordPageSize]*memoryRecord
}

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
	if p == nil {
		return nil
	}
	return p.recs[i]
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

// put sets the record at k.
func (m *memoryMessages) put(k locKey, r *memoryRecord) {
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
	if p.recs[i] == nil {
		p.n++
	}
	p.recs[i] = r
}

// delete removes the record at k, if there is one.
func (m *memoryMessages) delete(k locKey) {
	base, i := pageOf(k)
	p := m.page(base)
	if p == nil || p.recs[i] == nil {
		return
	}
	p.recs[i] = nil
	if p.n--; p.n == 0 {
		delete(m.pages, base)
		if m.last == p {
			m.last = nil
		}
		if len(m.spares) < maxSpares {
			m.spares = append(m.spares, p) // every slot is empty again
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
		n += p.n
	}
	return n
}

// all calls fn for every record, in no order.
func (m *memoryMessages) all(fn func(k locKey, r *memoryRecord)) {
	for base, p := range m.pages {
		for i, r := range p.recs {
			if r != nil {
				fn(locKey{base[0], base[1] + uint64(i)}, r)
			}
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
		if p != nil && p.recs[j] != nil {
			out[i] = p.recs[j].msg
		}
	}
}
