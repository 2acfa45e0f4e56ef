package engine

import (
	"sync"

	"github.com/tidwall/btree"
)

// seqSet is a set of entries by sequence number: a queue's active, locked
// and deferred messages, a session's available ones, the scheduled ones.
//
// Messages join a queue at the end of the sequence and mostly leave it from
// the front, and a B-tree pays for that pattern: each delete at the front of
// a leaf shifts the leaf's pointers down, under the collector's write
// barrier while it marks, which was a fifth of the engine's loop. A seqSet
// is a sparse array instead: pages of seqPageSize slots, each slot the
// entry with one sequence number, and an ordered tree of the pages that
// are not empty. Set, Delete and Get write or read one slot (the page is
// usually the one used last); only every seqPageSize-th message adds or
// drops a page. A page costs its slots however few entries it holds: at
// worst (entries at least seqPageSize apart) about 270 bytes per entry,
// and 8 bytes per entry in a queue's dense run.
//
// It is guarded by its entity's mutex, like the trees.
type seqSet struct {
	pages *btree.BTreeG[*seqPage] // the pages that hold an entry, by base
	n     int
	last  *seqPage // the page used last, nil after it emptied
	spare *seqPage // an emptied page, kept for the next new one
	probe seqPage  // the key of a page lookup
	hint  btree.PathHint
}

const (
	seqPageBits = 5
	seqPageSize = 1 << seqPageBits
)

// seqPage holds the entries of seqPageSize consecutive sequence numbers (or
// keys).
type seqPage struct {
	base  int64 // the key of slots[0], a multiple of seqPageSize
	n     int   // the entries in slots
	lo    int   // every slot below lo is empty
	slots [seqPageSize]*entry
}

// seqPages holds emptied pages that no set kept as its spare, for any
// set's next new page: a batch of messages fills and empties a page per
// seqPageSize of them in each set it passes through, and a set keeps one
// spare only.
var seqPages = sync.Pool{New: func() any { return new(seqPage) }}

func newSeqSet() *seqSet {
	return &seqSet{pages: btree.NewBTreeGOptions(byBase, btree.Options{NoLocks: true})}
}

func byBase(a, b *seqPage) bool { return a.base < b.base }

func pageBase(seq int64) int64 { return seq &^ (seqPageSize - 1) }

// page returns the page that would hold seq, or nil.
func (s *seqSet) page(seq int64) *seqPage {
	base := pageBase(seq)
	if p := s.last; p != nil && p.base == base {
		return p
	}
	s.probe.base = base
	p, ok := s.pages.GetHint(&s.probe, &s.hint)
	if !ok {
		return nil
	}
	s.last = p
	return p
}

// Len returns the number of entries.
func (s *seqSet) Len() int { return s.n }

// Set adds x, or puts it in place of the entry with its sequence number.
func (s *seqSet) Set(x *entry) { s.put(x.seq, x) }

// put adds x under key (a sequence number, or another number that orders
// the set: see lockQueue).
func (s *seqSet) put(key int64, x *entry) {
	p := s.page(key)
	if p == nil {
		p = s.spare
		s.spare = nil
		if p == nil {
			p = seqPages.Get().(*seqPage)
		}
		p.base, p.lo = pageBase(key), seqPageSize
		s.pages.SetHint(p, &s.hint)
		s.last = p
	}
	i := int(key - p.base)
	if p.slots[i] == nil {
		p.n++
		s.n++
	}
	p.slots[i] = x
	p.lo = min(p.lo, i)
}

// Delete removes the entry with x's sequence number, if there is one.
func (s *seqSet) Delete(x *entry) { s.remove(x.seq) }

// remove removes the entry under key, if there is one.
func (s *seqSet) remove(key int64) {
	p := s.page(key)
	if p == nil {
		return
	}
	i := int(key - p.base)
	if p.slots[i] == nil {
		return
	}
	p.slots[i] = nil
	p.n--
	s.n--
	if p.n == 0 {
		s.pages.DeleteHint(p, &s.hint)
		if s.last == p {
			s.last = nil
		}
		if s.spare != nil {
			seqPages.Put(s.spare)
		}
		s.spare = p // every slot is empty again
	}
}

// Get returns the entry with sequence number seq.
func (s *seqSet) Get(seq int64) (*entry, bool) {
	p := s.page(seq)
	if p == nil {
		return nil, false
	}
	x := p.slots[seq-p.base]
	return x, x != nil
}

// Min returns the entry with the lowest sequence number.
func (s *seqSet) Min() (*entry, bool) {
	p, ok := s.pages.Min()
	if !ok {
		return nil, false
	}
	for p.slots[p.lo] == nil { // a page in the tree holds an entry at lo or above
		p.lo++
	}
	return p.slots[p.lo], true
}

// Ascend calls fn for the entries with sequence numbers from `from` on, in
// order, until fn returns false. fn must not change the set.
func (s *seqSet) Ascend(from int64, fn func(*entry) bool) {
	s.probe.base = pageBase(from)
	s.pages.Ascend(&s.probe, func(p *seqPage) bool {
		i := p.lo
		if p.base < from {
			i = max(i, int(from-p.base))
		}
		for ; i < seqPageSize; i++ {
			if x := p.slots[i]; x != nil && !fn(x) {
				return false
			}
		}
		return true
	})
}

// Scan calls fn for every entry in order until fn returns false. fn must
// not change the set.
func (s *seqSet) Scan(fn func(*entry) bool) { s.Ascend(0, fn) }
