package model

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// walkPage is how many messages one Browse of a walk asks for.
const walkPage = 1000

// paneScope is what a walk over a pane covers: every message of pane i of
// the entity (all pages, not only the window on screen) that the filter
// lets through, or, when only is not nil, the selected ones among them.
// A pane built here (localPane) is walked over local, copied in Update.
type paneScope struct {
	entity string
	pane   int
	filter filterSpec
	only   map[int64]bool
	local  []*broker.Message
	isLoc  bool
}

// scope returns the scope of the focused pane: its selection when it has
// one (copied, so that the walk never reads the model), else all of it.
func (m *Model) scope() paneScope {
	s := paneScope{entity: m.entity, pane: m.focus, filter: m.filter}
	if sel := m.focused().selected; len(sel) > 0 {
		s.only = make(map[int64]bool, len(sel))
		for k := range sel {
			s.only[k] = true
		}
	}
	if m.localPane(m.focus) {
		s.isLoc = true
		if category(m.focus) == broker.CategoryLocked || category(m.focus) == broker.CategoryDeadLettered {
			s.local = m.heldInOrder(addresses(m.entity, m.focus)...)
		}
	}
	return s
}

// bounds returns the sequence numbers a walk of the scope goes from and to.
func (s paneScope) bounds() (lo, hi int64) {
	if s.only == nil {
		return 0, math.MaxInt64
	}
	lo, hi = math.MaxInt64, 0
	for k := range s.only {
		lo, hi = min(lo, k), max(hi, k)
	}
	return lo, hi
}

// errWalkStop ends a walk early without an error.
var errWalkStop = errors.New("stop the walk")

// walk hands every message of the scope to fn, a page at a time, in
// sequence order (the Scheduled pane too: a walk needs no due order).
// Each Browse is bounded by timeout; ctx ends the walk. fn returning
// errWalkStop ends it without error.
func (s paneScope) walk(ctx context.Context, c broker.Client, timeout time.Duration, fn func([]*broker.Message) error) error {
	lo, hi := s.bounds()
	keep := func(msgs []*broker.Message) []*broker.Message {
		out := msgs[:0:0]
		for _, x := range msgs {
			if x.SequenceNumber < lo || x.SequenceNumber > hi {
				continue
			}
			if s.only != nil && !s.only[x.SequenceNumber] {
				continue
			}
			if s.filter.active() && !s.filter.Match(x) {
				continue
			}
			out = append(out, x)
		}
		return out
	}
	if s.isLoc {
		if err := fn(keep(s.local)); err != nil && !errors.Is(err, errWalkStop) {
			return err
		}
		return nil
	}
	from := lo
	for from <= hi {
		if err := ctx.Err(); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		msgs, err := c.Browse(cctx, broker.BrowseRequest{Entity: s.entity, Category: category(s.pane), FromSequence: from, Max: walkPage})
		cancel()
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return nil
		}
		last := msgs[len(msgs)-1].SequenceNumber
		if err := fn(keep(msgs)); err != nil {
			if errors.Is(err, errWalkStop) {
				return nil
			}
			return err
		}
		if last == math.MaxInt64 {
			return nil
		}
		from = last + 1
	}
	return nil
}
