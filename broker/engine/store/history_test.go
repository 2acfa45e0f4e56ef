package store

import (
	"bytes"
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

// The first event of a history kept in the message's record is read as
// event 0 in whichever sub-queue the message is, before the history records;
// HideFirstHistory folds it away (and a deletion of index 0 undoes that);
// a put of the message again without it, or its deletion, drops it.
func TestStoreHistoryInMessageRecord(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		k := HistoryKey{Entity: 1, Seq: 7}
		loc := Loc{Entity: 1, Seq: 7}
		evs := []HistoryEvent{
			{Kind: broker.EventSent, Time: 1, Actor: "connection 1f link s", Detail: "via"},
			{Kind: broker.EventLocked, Time: 2, Until: 3, Token: broker.LockToken{1, 2}, DeliveryCount: 1, Actor: "c"},
			{Kind: broker.EventRenewed, Time: 4, Until: 5, Token: broker.LockToken{1, 2}, DeliveryCount: 1, Actor: "c"},
		}
		want := func(wantFirst uint16, want []HistoryEvent) {
			t.Helper()
			first, got, err := s.History(k)
			if err != nil || first != wantFirst || len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual(got, want) {
				t.Fatalf("History = %d, %+v, %v; want %d, %+v", first, got, err, wantFirst, want)
			}
		}
		var b Batch
		b.PutMessageWithHistory(loc, Meta{}, &broker.Message{MessageID: "m"}, &evs[0])
		apply(t, s, &b)
		want(0, evs[:1])
		if m, err := s.Get(loc); err != nil || m.MessageID != "m" {
			t.Fatalf("Get = %+v, %v", m, err)
		}
		b = Batch{}
		b.PutHistory(k, 1, &evs[1])
		b.PutHistory(k, 2, &evs[2])
		apply(t, s, &b)
		want(0, evs)
		b = Batch{}
		b.HideFirstHistory(k)
		apply(t, s, &b)
		want(1, evs[1:])
		b = Batch{}
		b.DeleteHistory(k, 1, 1)
		apply(t, s, &b)
		want(2, evs[2:])
		b = Batch{}
		b.DeleteHistory(k, 0, 1) // what hides it
		b.DeleteHistory(k, 2, 1)
		apply(t, s, &b)
		want(0, evs[:1])

		// Dead-lettered with its first event, then put again without it.
		dl := Loc{Entity: 1, Sub: broker.SubQueueDeadLetter, Seq: 7}
		b = Batch{}
		b.DeleteMessage(loc)
		b.PutMessageWithHistory(dl, Meta{}, &broker.Message{MessageID: "m"}, &evs[0])
		apply(t, s, &b)
		want(0, evs[:1])
		b = Batch{}
		b.PutMessage(dl, Meta{}, &broker.Message{MessageID: "m"})
		apply(t, s, &b)
		want(0, nil)
		b = Batch{}
		b.PutMessageWithHistory(dl, Meta{}, &broker.Message{MessageID: "m"}, &evs[0])
		apply(t, s, &b)
		b = Batch{}
		b.DeleteMessage(dl)
		apply(t, s, &b)
		want(0, nil)
		if m, ok := s.(*Memory); ok && m.HistoryCount() != 0 {
			t.Fatalf("%d history records left", m.HistoryCount())
		}
	})
}

// A message record keeps its first history event across a reopen; the
// record that hides it does too.
func TestPebbleHistoryInMessageRecordSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s := openTestPebble(t, dir)
	ev := HistoryEvent{Kind: broker.EventScheduled, Time: 1, Actor: "a", Reason: "r", Detail: "d"}
	var b Batch
	b.PutMessageWithHistory(Loc{Entity: 1, Seq: 1}, Meta{}, &broker.Message{}, &ev)
	b.PutMessageWithHistory(Loc{Entity: 1, Seq: 2}, Meta{}, &broker.Message{}, &ev)
	b.HideFirstHistory(HistoryKey{Entity: 1, Seq: 2})
	apply(t, s, &b)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestPebble(t, dir)
	if first, evs, err := s.History(HistoryKey{Entity: 1, Seq: 1}); err != nil || first != 0 || len(evs) != 1 || evs[0] != ev {
		t.Fatalf("History after a reopen = %d, %+v, %v", first, evs, err)
	}
	if _, evs, err := s.History(HistoryKey{Entity: 1, Seq: 2}); err != nil || len(evs) != 0 {
		t.Fatalf("hidden first event after a reopen = %+v, %v", evs, err)
	}
}

// TestPebbleActorsKeptOnce: the Pebble store keeps a long actor once per
// batch, in its actor space, and each event (in a message's record or in
// a history record) names it by its hash; after a reopen the events read
// back whole.
func TestPebbleActorsKeptOnce(t *testing.T) {
	dir := t.TempDir()
	s := openTestPebble(t, dir)
	sender := `connection 00000000000000a1 (container "app-7f3c9e") link "sender-0f9a"`
	receiver := `connection 00000000000000a1 (container "app-7f3c9e") link "receiver-77b2"`
	var b Batch
	var firsts [3]HistoryEvent
	for i := range firsts {
		firsts[i] = HistoryEvent{Kind: broker.EventSent, Time: int64(i + 1), Actor: sender}
		loc := Loc{Entity: 1, Seq: int64(i + 1)}
		b.PutMessageWithHistory(loc, Meta{State: broker.StateActive}, &broker.Message{Body: []byte("x")}, &firsts[i])
	}
	handOut := HistoryEvent{Kind: broker.EventLocked, Time: 9, Until: 10, Token: broker.LockToken{3}, DeliveryCount: 1, Actor: receiver}
	b.PutHistory(HistoryKey{Entity: 1, Seq: 1}, 1, &handOut)
	apply(t, s, &b)

	actors := 0
	if err := s.scan(spaceActor, func(k, v []byte) error { actors++; return nil }); err != nil {
		t.Fatal(err)
	}
	if actors != 2 {
		t.Errorf("%d actors kept, want 2 (each once)", actors)
	}
	bk := makeMessageKey(spaceBody, Loc{Entity: 1, Seq: 2})
	v, closer, err := s.db.Get(bk[:])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(v, []byte(sender)) {
		t.Error("a message record keeps its actor inline")
	}
	closer.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openTestPebble(t, dir)
	first, got, err := s.History(HistoryKey{Entity: 1, Seq: 1})
	if want := []HistoryEvent{firsts[0], handOut}; err != nil || first != 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("History after a reopen = %d, %+v, %v; want 0, %+v", first, got, err, want)
	}
	if _, got, err = s.History(HistoryKey{Entity: 1, Seq: 3}); err != nil || len(got) != 1 || got[0].Actor != sender {
		t.Fatalf("History of message 3 = %+v, %v", got, err)
	}
}
