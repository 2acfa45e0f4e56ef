package engine

import (
	"sync"

	"github.com/peeklock/peeklock/broker/engine/store"
)

// scratch is the working memory of a receive that the engine keeps between
// calls: its hand-outs (built under the entity mutex, read after it) and
// the store locations of the messages to read. A receive used to allocate
// both, about 60 bytes per message for the collector.
type scratch struct {
	hs   []handout
	locs []store.Loc
}

// scratchPool holds scratches for reuse.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxScratch is the most hand-outs or locations a scratch keeps when it
// goes back to the pool: a receive's batch; a larger browse's are dropped.
const maxScratch = 256

// put gives sc back to the pool, emptied; slices grown past maxScratch are
// dropped.
func (sc *scratch) put() {
	if cap(sc.hs) > maxScratch {
		sc.hs = nil
	}
	if cap(sc.locs) > maxScratch {
		sc.locs = nil
	}
	sc.hs, sc.locs = sc.hs[:0], sc.locs[:0]
	scratchPool.Put(sc)
}
