package store

import (
	"encoding/binary"

	"github.com/peeklock/peeklock/broker"
)

// Key layout of the Pebble store. Every key starts with one byte naming its
// key space; numbers are big-endian so that keys sort by them:
//
//	!format                        -> uvarint layout version
//	b | entity(4) | sub(1) | seq(8) -> message (the body record, written once)
//	e | entity(4)                   -> EntityRecord
//	m | entity(4) | sub(1) | seq(8) -> Meta
//	s | entity(4)                   -> uvarint codec version, varint last sequence
//
// Load scans the e, s and m spaces only; bodies are read one at a time by
// Get. A sequence number is stored with its sign bit flipped, so that
// negative numbers (never assigned, but representable) sort first.
const (
	spaceBody     = 'b'
	spaceEntity   = 'e'
	spaceMeta     = 'm'
	spaceSequence = 's'

	entityKeyLen  = 1 + 4
	messageKeyLen = 1 + 4 + 1 + 8
)

// layoutVersion is the value of formatKey; OpenPebble refuses other values.
const layoutVersion = 1

var formatKey = []byte("!format")

type messageKey [messageKeyLen]byte

func makeMessageKey(space byte, loc Loc) messageKey {
	var k messageKey
	k[0] = space
	binary.BigEndian.PutUint32(k[1:5], loc.Entity)
	k[5] = byte(loc.Sub)
	binary.BigEndian.PutUint64(k[6:], uint64(loc.Seq)^(1<<63))
	return k
}

// parseMessageKey returns the location a meta or body key names.
func parseMessageKey(k []byte) (Loc, bool) {
	if len(k) != messageKeyLen {
		return Loc{}, false
	}
	return Loc{
		Entity: binary.BigEndian.Uint32(k[1:5]),
		Sub:    broker.SubQueue(k[5]),
		Seq:    int64(binary.BigEndian.Uint64(k[6:]) ^ (1 << 63)),
	}, true
}

type entityKey [entityKeyLen]byte

func makeEntityKey(space byte, id uint32) entityKey {
	var k entityKey
	k[0] = space
	binary.BigEndian.PutUint32(k[1:], id)
	return k
}

func parseEntityKey(k []byte) (uint32, bool) {
	if len(k) != entityKeyLen {
		return 0, false
	}
	return binary.BigEndian.Uint32(k[1:]), true
}

// entitySpan returns the bounds [start, end) of every key of entity id in a
// key space.
func entitySpan(space byte, id uint32) (start, end []byte) {
	s := makeEntityKey(space, id)
	e := s
	// Increment the 5-byte big-endian number space|id; the carry of the last
	// entity id goes into the space byte.
	for i := len(e) - 1; i >= 0; i-- {
		e[i]++
		if e[i] != 0 {
			break
		}
	}
	return s[:], e[:]
}

// spaceSpan returns the bounds [start, end) of a whole key space.
func spaceSpan(space byte) (start, end []byte) {
	return []byte{space}, []byte{space + 1}
}
