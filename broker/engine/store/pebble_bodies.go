package store

import (
	"bytes"
	"errors"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/peeklock/peeklock/broker"
)

// Bodies reads the messages at locs as they were put, without their metas.
// The cache of recent puts answers first (see bodyCache); of the others,
// one message is a point read; several share one iterator, seeking forward
// through the body space in key order, so that neighbours (a receive or a
// browse takes consecutive sequence numbers) cost a step each instead of a
// lookup through every level.
func (s *Pebble) Bodies(locs []Loc, out []*broker.Message) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	clear(out[:len(locs)])
	if s.cache != nil {
		switch hits := s.cache.get(locs, out); {
		case hits == len(locs):
			return nil
		case hits > 0:
			return s.missedBodies(locs, out)
		}
	}
	return s.bodies(locs, out)
}

// missedBodies reads from Pebble the messages of locs that the cache did
// not hold (nil slots of out).
func (s *Pebble) missedBodies(locs []Loc, out []*broker.Message) error {
	var missed []Loc
	var at []int
	for i, m := range out[:len(locs)] {
		if m == nil {
			missed, at = append(missed, locs[i]), append(at, i)
		}
	}
	read := make([]*broker.Message, len(missed))
	if err := s.bodies(missed, read); err != nil {
		return err
	}
	for j, i := range at {
		out[i] = read[j]
	}
	return nil
}

// bodies reads the messages at locs from Pebble; out's slots are nil.
func (s *Pebble) bodies(locs []Loc, out []*broker.Message) error {
	switch len(locs) {
	case 0:
		return nil
	case 1:
		return s.pointBody(locs[0], &out[0])
	}
	keys := make([]messageKey, len(locs))
	order := make([]int, len(locs))
	for i, loc := range locs {
		keys[i] = makeMessageKey(spaceBody, loc)
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(keys[a][:], keys[b][:]) })
	first, last := keys[order[0]], keys[order[len(order)-1]]
	iter, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: first[:],
		UpperBound: append(last[:], 0), // the smallest key after last
	})
	if err != nil {
		return pebbleError("read messages", err)
	}
	for _, i := range order {
		if !iter.SeekGE(keys[i][:]) || !bytes.Equal(iter.Key(), keys[i][:]) {
			continue
		}
		v, err := iter.ValueAndErr()
		if err != nil {
			_ = iter.Close()
			return s.getError(locs[i], err)
		}
		if out[i], err = decodeMessage(v); err != nil {
			_ = iter.Close()
			return err
		}
	}
	if err := iter.Close(); err != nil {
		return pebbleError("read messages", err)
	}
	return nil
}

// pointBody reads one body into *out, leaving it nil when it is not stored.
func (s *Pebble) pointBody(loc Loc, out **broker.Message) error {
	bk := makeMessageKey(spaceBody, loc)
	v, closer, err := s.db.Get(bk[:])
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			return nil
		}
		return s.getError(loc, err)
	}
	defer closer.Close()
	msg, err := decodeMessage(v)
	if err != nil {
		return err
	}
	*out = msg
	return nil
}
