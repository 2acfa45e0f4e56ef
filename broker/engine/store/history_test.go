package store

import (
	"reflect"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// A history keeps its events in index order, loses the oldest when the
// engine deletes them (the lowest index left counts those folded away),
// survives a reopen of the Pebble store, and goes with its entity.
func TestStoreHistory(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		k := HistoryKey{Entity: 1, Seq: 7}
		other := HistoryKey{Entity: 2, Seq: 7}
		evs := []HistoryEvent{
			{Kind: broker.EventSent, Time: 1, Actor: "connection 1f link s"},
			{Kind: broker.EventLocked, Time: 2, Until: 3, Token: broker.LockToken{1, 2}, DeliveryCount: 1, Actor: "c"},
			{Kind: broker.EventDeadLettered, Sub: broker.SubQueueDeadLetter, Time: 4, Actor: broker.ActorBroker, Reason: "MaxDeliveryCountExceeded", Detail: "d"},
		}
		var b Batch
		for i := range evs {
			b.PutHistory(k, uint16(i), &evs[i])
		}
		b.PutHistory(other, 0, &evs[0])
		apply(t, s, &b)
		first, got, err := s.History(k)
		if err != nil || first != 0 || !reflect.DeepEqual(got, evs) {
			t.Fatalf("History = %d, %+v, %v; want 0, %+v", first, got, err, evs)
		}
		b = Batch{}
		b.DeleteHistory(k, 0, 1)
		apply(t, s, &b)
		if first, got, _ = s.History(k); first != 1 || !reflect.DeepEqual(got, evs[1:]) {
			t.Fatalf("after deleting the oldest: %d, %+v", first, got)
		}
		b = Batch{}
		b.DeleteEntity(1)
		apply(t, s, &b)
		if _, got, _ = s.History(k); len(got) != 0 {
			t.Errorf("history of a deleted entity: %+v", got)
		}
		if _, got, _ = s.History(other); len(got) != 1 {
			t.Errorf("another entity's history: %+v", got)
		}
	})
}
