package engine

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// failingReads is a store whose message reads (Bodies) fail while fail is
// set; everything else works.
type failingReads struct {
	store.Store
	fail atomic.Bool
}

var errInjectedRead = errors.New("injected read failure")

func (s *failingReads) Bodies(locs []store.Loc, out []*broker.Message) error {
	if s.fail.Load() {
		return errInjectedRead
	}
	return s.Store.Bodies(locs, out)
}

// TestStoreReadErrorsReachTheReceiver: a receive (peek-lock, receive and
// delete, deferred by sequence number) or a browse whose messages the
// store cannot read fails with the store's error instead of coming back
// empty, and leaves nothing locked, deleted or counted: once the store
// reads again, the messages are received as if nothing had happened.
func TestStoreReadErrorsReachTheReceiver(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		st := &failingReads{Store: newStore()}
		f := newFixture(t, st)
		ctx := f.ctx
		f.queue("q", broker.EntitySettings{})
		f.send("q", msg("a"), msg("b"), msg("c"))
		deferred := f.receiveOne("q")
		f.mustSettle(broker.Defer, "q", deferred)

		st.fail.Store(true)
		wantReadErr := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, errInjectedRead) || !strings.Contains(err.Error(), "reading the messages failed") {
				t.Fatalf("%s with failing reads: %v; want the store's error", what, err)
			}
		}
		_, err := f.e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 5})
		wantReadErr("peek-lock receive", err)
		_, err = f.e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.ReceiveAndDelete, Max: 5})
		wantReadErr("receive and delete", err)
		_, err = f.e.ReceiveDeferred(ctx, "q", []int64{deferred.SequenceNumber})
		wantReadErr("deferred receive", err)
		_, err = f.e.Browse(ctx, broker.BrowseRequest{Entity: "q", Max: 5})
		wantReadErr("browse", err)
		f.wantCounts("q", broker.Counts{Active: 2, Deferred: 1})

		st.fail.Store(false)
		got, err := f.e.Receive(ctx, broker.ReceiveRequest{Entity: "q", Max: 5})
		if err != nil || len(got) != 2 || got[0].MessageID != "b" || got[0].DeliveryCount != 1 || got[1].DeliveryCount != 1 {
			t.Fatalf("receive after the store recovered = %+v, %v; want b and c, first delivery", got, err)
		}
		d, err := f.e.ReceiveDeferred(ctx, "q", []int64{deferred.SequenceNumber})
		if err != nil || len(d) != 1 || d[0].MessageID != "a" || d[0].DeliveryCount != deferred.DeliveryCount+1 {
			t.Fatalf("deferred receive after the store recovered = %+v, %v; want a, delivery %d", d, err, deferred.DeliveryCount+1)
		}
	})
}
