package store

import (
	"encoding/binary"

	"github.com/peeklock/peeklock/broker"
)

// Key layout of the Pebble store. Every key starts with one byte naming its
// key space; numbers are big-endian so that keys sort by them:
//
//	!format                        -> uvarint layout version
//	a | hash(8)                     -> codec version, an actor's name (see actorRefs)
//	b | entity(4) | sub(1) | seq(8) -> message (the body record, written once)
//	d | entity(4) | end(8) | id     -> codec version (a duplicate-detection record)
//	e | entity(4)                   -> EntityRecord
//	h | entity(4) | seq(8) | index(2) -> codec version, a history event
//	m | entity(4) | sub(1) | seq(8) -> Meta
//	s | entity(4)                   -> uvarint codec version, varint last sequence
//	t | entity(4) | session id      -> state version 2, varint set time, session state bytes
//
// A message's b and m keys may be deleted with Pebble's single deletes
// (see singleDeletes): a Pebble-level record kind, not a layout change;
// any build on this Pebble version reads them.
//
// Load scans every space but b; bodies are read by Get and Bodies. A
// sequence number or a window end is stored with its sign bit flipped, so
// that negative numbers (never assigned, but representable) sort first. The
// message id or session id of a d or t key is the rest of the key, its bytes
// as they are. A session state written before its set time was kept has
// codec version 1 and no time.
//
// The a space keeps the actors that history events name by their hash,
// each written again in every batch with an event that names it; Load skips
// it and nothing deletes it (an actor is a connection's link: a few hundred
// bytes each). It was added as h was, without a new layout version: an
// event that names its actor by reference starts with a version of its own
// (historyActorRef), which older builds refuse to read.
//
// Load skips the h space too: a history is read by History. It was added
// as d and t were, without a new layout version. Event 0 of a history may
// instead be kept in the message's body record (message codec version 3);
// an h record of index 0 whose value is the single byte 0 hides it.
//
// The d and t spaces were added without a new layout version: a store
// written before them has none of their keys and loads as it did, with no
// session state and no duplicate-detection history beyond its stored
// messages. (A build that predates them ignores them, and would leave those
// of an entity it deletes behind; they name an entity id that is never used
// again, and this build's Load skips them.)
const (
	spaceActor     = 'a'
	spaceBody      = 'b'
	spaceDuplicate = 'd'
	spaceEntity    = 'e'
	spaceHistory   = 'h'
	spaceMeta      = 'm'
	spaceSequence  = 's'
	spaceState     = 't'

	entityKeyLen  = 1 + 4
	messageKeyLen = 1 + 4 + 1 + 8
)

// layoutVersion is the value of formatKey; OpenPebble refuses other values.
const layoutVersion = 1

var formatKey = []byte("!format")

// makeActorKey returns the key of the actor with the given hash.
func makeActorKey(hash uint64) [9]byte {
	var k [9]byte
	k[0] = spaceActor
	binary.BigEndian.PutUint64(k[1:], hash)
	return k
}

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

// historyKeyLen is the length of a history event's key.
const historyKeyLen = 1 + 4 + 8 + 2

// makeHistoryKey returns the key of event index of a message's history;
// with the index left off (prefix), the start of all of them.
func makeHistoryKey(k HistoryKey, index uint16) [historyKeyLen]byte {
	var out [historyKeyLen]byte
	out[0] = spaceHistory
	binary.BigEndian.PutUint32(out[1:5], k.Entity)
	binary.BigEndian.PutUint64(out[5:13], uint64(k.Seq)^(1<<63))
	binary.BigEndian.PutUint16(out[13:], index)
	return out
}

// makeStateKey returns the key of a session's state.
func makeStateKey(dst []byte, entity uint32, sessionID string) []byte {
	dst = append(dst, spaceState)
	dst = binary.BigEndian.AppendUint32(dst, entity)
	return append(dst, sessionID...)
}

// parseStateKey returns the entity and session id a state key names.
func parseStateKey(k []byte) (uint32, string, bool) {
	if len(k) < entityKeyLen {
		return 0, "", false
	}
	return binary.BigEndian.Uint32(k[1:5]), string(k[entityKeyLen:]), true
}

// makeDuplicateKey returns the key of a duplicate-detection record. Keys of
// one entity sort by window end, then id.
func makeDuplicateKey(dst []byte, r DuplicateRecord) []byte {
	dst = append(dst, spaceDuplicate)
	dst = binary.BigEndian.AppendUint32(dst, r.Entity)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.End)^(1<<63))
	return append(dst, r.ID...)
}

// parseDuplicateKey returns the record a duplicate-detection key names.
func parseDuplicateKey(k []byte) (DuplicateRecord, bool) {
	if len(k) < entityKeyLen+8 {
		return DuplicateRecord{}, false
	}
	return DuplicateRecord{
		Entity: binary.BigEndian.Uint32(k[1:5]),
		End:    int64(binary.BigEndian.Uint64(k[5:13]) ^ (1 << 63)),
		ID:     string(k[13:]),
	}, true
}
