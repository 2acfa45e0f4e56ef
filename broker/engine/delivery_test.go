package engine

import (
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// TestDeliveriesNeverChange checks that a handed-out delivery's message,
// the stored message itself, never changes: settlements that modify its
// properties (abandon, defer and dead-letter with PropertiesToModify, and
// the dead-lettering of a message past MaxDeliveryCount) store a new
// message instead, which later receives see. A goroutine reads every
// handed-out message while they are settled, as the listener's encoder
// would: under the race detector a write in place is reported; without
// it, the comparison with what the messages held when handed out fails.
func TestDeliveriesNeverChange(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxDeliveryCount: 2, LockDuration: time.Minute})
		const n = 30
		msgs := make([]*broker.Message, n)
		for i := range msgs {
			msgs[i] = &broker.Message{Body: []byte("body"), ApplicationProperties: map[string]any{"n": int64(i)}}
		}
		if err := f.e.SendOwned(f.ctx, "q", msgs); err != nil {
			t.Fatal(err)
		}
		settleAll := func(ds []broker.Delivery, kind func(i int) broker.SettleKind) {
			t.Helper()
			held := make([]broker.Message, len(ds))
			props := make([]map[string]any, len(ds))
			for i := range ds {
				held[i], props[i] = *ds[i].Msg, maps.Clone(ds[i].Msg.ApplicationProperties)
			}
			read := make(chan struct{})
			go func() { // the encoder of a listener, reading while the settlements run
				defer close(read)
				for range 10 {
					for i := range ds {
						m := *ds[i].Msg
						for k, v := range m.ApplicationProperties {
							_, _ = k, v
						}
					}
				}
			}()
			ss := make([]broker.Settlement, len(ds))
			for i := range ds {
				ss[i] = broker.Settlement{Kind: kind(i), Entity: "q", Token: ds[i].LockToken,
					Reason: "r", Description: "d", PropertiesToModify: map[string]any{"changed": int64(i)}}
			}
			if errs := f.e.SettleMany(f.ctx, ss); errs != nil {
				t.Fatal(errs)
			}
			<-read
			for i := range ds {
				if m := ds[i].Msg; !reflect.DeepEqual(*m, held[i]) || !maps.Equal(m.ApplicationProperties, props[i]) {
					t.Errorf("delivery %d: its message changed after it was handed out:\n%+v\nwas\n%+v", i, *m, held[i])
				}
			}
		}
		receive := func(addr string, max int) []broker.Delivery {
			t.Helper()
			ds, err := f.e.ReceiveDeliveries(f.ctx, 0, broker.ReceiveRequest{Entity: addr, Max: max}, nil)
			if err != nil || len(ds) != max {
				t.Fatalf("receive from %s: %d deliveries, %v; want %d", addr, len(ds), err, max)
			}
			return ds
		}
		kinds := [...]broker.SettleKind{broker.Abandon, broker.Defer, broker.DeadLetter}
		settleAll(receive("q", n), func(i int) broker.SettleKind { return kinds[i%3] })
		// The abandoned messages again: with their new properties, and
		// dead-lettered by the broker when abandoned once more.
		again := receive("q", n/3)
		for _, d := range again {
			if d.Msg.ApplicationProperties["changed"] == nil || d.DeliveryCount != 2 {
				t.Errorf("sequence number %d received again: delivery count %d, properties %v", d.SequenceNumber, d.DeliveryCount, d.Msg.ApplicationProperties)
			}
		}
		settleAll(again, func(int) broker.SettleKind { return broker.Abandon })
		dead := receive(broker.SubQueueAddress("q", broker.SubQueueDeadLetter), 2*n/3)
		for _, d := range dead {
			if d.Msg.ApplicationProperties["changed"] == nil || d.Msg.DeadLetterReason() == "" {
				t.Errorf("dead-lettered sequence number %d: properties %v", d.SequenceNumber, d.Msg.ApplicationProperties)
			}
		}
		if f.counts("q").Deferred != n/3 {
			t.Errorf("counts %+v, want %d deferred", f.counts("q"), n/3)
		}
	})
}
