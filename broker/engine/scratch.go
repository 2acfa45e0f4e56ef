package engine

import (
	"sync"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// scratch is the working memory of a receive that the engine keeps between
// calls: its hand-outs (built under the entity mutex, read after it), the
// store locations of the messages to read and the messages read, and,
// for a receive that returns copies, the deliveries to copy. A receive used
// to allocate them, about 70 bytes per message for the collector.
type scratch struct {
	hs     []handout
	locs   []store.Loc
	stored []*broker.Message
	ds     []broker.Delivery
}

// scratchPool holds scratches for reuse.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxScratch is the most hand-outs or locations a scratch keeps when it
// goes back to the pool: a receive's batch; a larger browse's are dropped.
const maxScratch = 256

// put gives sc back to the pool, emptied (it keeps no message alive);
// slices grown past maxScratch are dropped.
func (sc *scratch) put() {
	clear(sc.stored)
	clear(sc.ds)
	sc.hs, sc.locs = trimScratch(sc.hs), trimScratch(sc.locs)
	sc.stored, sc.ds = trimScratch(sc.stored), trimScratch(sc.ds)
	scratchPool.Put(sc)
}

// trimScratch returns s emptied, or nil when it grew past maxScratch.
func trimScratch[T any](s []T) []T {
	if cap(s) > maxScratch {
		return nil
	}
	return s[:0]
}
