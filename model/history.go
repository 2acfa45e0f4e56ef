package model

import (
	"time"

	"github.com/peeklock/peeklock/ui"
)

// depthHistory is one entity's depth over the last minutes: one sample per
// historyBucket, the newest last.
type depthHistory struct {
	vals   []int64
	bucket int64
}

// add records depth at t; a second sample in the same bucket replaces the
// first, and buckets that passed without a sample repeat the last value.
func (h *depthHistory) add(t time.Time, depth int64) {
	b := t.UnixNano() / int64(historyBucket)
	switch {
	case len(h.vals) == 0:
		h.vals = append(h.vals, depth)
	case b <= h.bucket:
		h.vals[len(h.vals)-1] = depth
	default:
		last := h.vals[len(h.vals)-1]
		for gap := min(b-h.bucket-1, historyLen); gap > 0; gap-- {
			h.vals = append(h.vals, last)
		}
		h.vals = append(h.vals, depth)
	}
	h.bucket = b
	if n := len(h.vals); n > historyLen {
		h.vals = append(h.vals[:0], h.vals[n-historyLen:]...)
	}
}

// sampleHistory records the depth of every listed entity.
func (m *Model) sampleHistory(at time.Time) {
	seen := make(map[string]bool, len(m.entities))
	for _, e := range m.entities {
		h := m.history[e.Path]
		if h == nil {
			h = &depthHistory{}
			m.history[e.Path] = h
		}
		if !e.Counts.Unknown {
			h.add(at, ui.Depth(e.Counts))
		}
		seen[e.Path] = true
	}
	for p := range m.history {
		if !seen[p] {
			delete(m.history, p)
		}
	}
}
