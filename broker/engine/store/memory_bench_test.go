package store

import (
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// BenchmarkMemoryStoreLoop is the memory store's part of the engine's
// in-memory loop: a batch of 64 messages put at the back of a queue (each
// with a first history event) and the 64 oldest deleted from the front,
// with 256 in flight; an op is a message put and deleted. It uses only the
// Store interface, so that it runs on any version of the store.
func BenchmarkMemoryStoreLoop(b *testing.B) {
	const batch, inFlight = 64, 256
	s := NewMemory()
	msg := &broker.Message{}
	first := &HistoryEvent{Kind: broker.EventSent, Time: 1, Actor: "a"}
	var puts, dels Batch
	for i := range batch {
		puts.Ops = append(puts.Ops, Op{Kind: OpPutMessage, Loc: Loc{Entity: 1}, Message: msg, First: first, Meta: Meta{MessageID: "id"}})
		dels.Ops = append(dels.Ops, Op{Kind: OpDeleteMessage, Loc: Loc{Entity: 1, Seq: int64(i + 1 - inFlight)}})
	}
	var next int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		for j := range puts.Ops {
			next++
			puts.Ops[j].Loc.Seq = next
			dels.Ops[j].Loc.Seq = next - inFlight
		}
		if _, err := s.Apply(&puts); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Apply(&dels); err != nil {
			b.Fatal(err)
		}
	}
}
