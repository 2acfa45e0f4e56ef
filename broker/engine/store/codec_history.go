package store

import (
	"encoding/binary"
	"hash/fnv"
	"slices"

	"github.com/peeklock/peeklock/broker"
)

// historyActorRef is the first byte of an encoded history event whose
// actor is kept once in the store (see actorRefs) and named in the event by
// its hash; an event that starts with codecVersion keeps its actor inline.
const historyActorRef = 2

// minActorRef is the length from which an actor is kept by reference: a
// shorter one costs no more inline than its hash.
const minActorRef = 16

// actorHash names an actor kept by reference: FNV-1a, 64 bits. Two actors
// with one hash would show the later one's name in the earlier one's
// events (odds about 1 in 10^7 for a million actors).
func actorHash(actor string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(actor))
	return h.Sum64()
}

// actorRefs collects the actors that the events of one batch name by
// reference, for the store to keep beside them in the same batch (each
// once per batch, not once per message: a connection's actor is about 100
// bytes, a tenth of a 1 KiB message).
type actorRefs struct {
	hashes []uint64
	names  []string
}

// ref returns the hash of actor and keeps actor for the batch. The events
// of a batch name few actors, most of them many times: the name is looked
// up before it is hashed.
func (r *actorRefs) ref(actor string) uint64 {
	if i := slices.Index(r.names, actor); i >= 0 {
		return r.hashes[i]
	}
	h := actorHash(actor)
	r.hashes, r.names = append(r.hashes, h), append(r.names, actor)
	return h
}

// appendHistoryEvent appends the encoding of a history event to dst. With
// refs not nil, a long actor is written as its hash and kept in refs.
func appendHistoryEvent(dst []byte, ev *HistoryEvent, refs *actorRefs) []byte {
	e := encoder{buf: dst}
	byRef := refs != nil && len(ev.Actor) >= minActorRef
	if byRef {
		e.byte(historyActorRef)
	} else {
		e.byte(codecVersion)
	}
	e.byte(byte(ev.Kind))
	e.byte(byte(ev.Sub))
	e.uvarint(uint64(ev.DeliveryCount))
	e.varint(ev.Time)
	e.varint(ev.Until)
	if ev.Token.IsZero() {
		e.byte(0)
	} else {
		e.byte(1)
		e.fixed(ev.Token[:])
	}
	if byRef {
		e.buf = binary.BigEndian.AppendUint64(e.buf, refs.ref(ev.Actor))
	} else {
		e.string(ev.Actor)
	}
	e.string(ev.Reason)
	e.string(ev.Detail)
	return e.buf
}

// actorLookup returns the actor that a history event names by its hash.
type actorLookup func(hash uint64) (string, error)

// decodeHistoryEvent decodes an event written by appendHistoryEvent; an
// actor kept by reference is read with actor (an event that has one is an
// error when actor is nil).
func decodeHistoryEvent(b []byte, actor actorLookup) (HistoryEvent, error) {
	d := decoder{b: b, what: "history event"}
	byRef := len(d.b) > 0 && d.b[0] == historyActorRef
	if byRef {
		d.byte()
	} else {
		d.version()
	}
	var ev HistoryEvent
	ev.Kind = broker.EventKind(d.byte())
	ev.Sub = broker.SubQueue(d.byte())
	ev.DeliveryCount = d.uint32()
	ev.Time = d.varint()
	ev.Until = d.varint()
	if d.byte() == 1 {
		copy(ev.Token[:], d.fixed(len(ev.Token)))
	}
	var hash uint64
	if byRef {
		if h := d.fixed(8); d.err == nil {
			hash = binary.BigEndian.Uint64(h)
		}
	} else {
		ev.Actor = d.string()
	}
	ev.Reason = d.string()
	ev.Detail = d.string()
	if err := d.finish(); err != nil {
		return HistoryEvent{}, err
	}
	if byRef {
		if actor == nil {
			return HistoryEvent{}, corrupt("history event names actor %016x, which nothing keeps", hash)
		}
		name, err := actor(hash)
		if err != nil {
			return HistoryEvent{}, err
		}
		ev.Actor = name
	}
	return ev, nil
}
