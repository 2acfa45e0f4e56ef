package store

import "github.com/peeklock/peeklock/broker"

// locKey is a Loc packed without padding: entity and sub-queue, then the
// sequence number. A map hashes it as 16 plain bytes, where a Loc's
// padding makes Go hash its fields one by one. The memory store's messages
// and the Pebble store's cache are keyed by it.
type locKey [2]uint64

func keyOf(loc Loc) locKey {
	return locKey{uint64(loc.Entity)<<8 | uint64(loc.Sub), uint64(loc.Seq)}
}

// entity returns the entity id of k.
func (k locKey) entity() uint32 { return uint32(k[0] >> 8) }

// loc returns the Loc k packs.
func (k locKey) loc() Loc {
	return Loc{Entity: k.entity(), Sub: broker.SubQueue(k[0] & 0xff), Seq: int64(k[1])}
}
