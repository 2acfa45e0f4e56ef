package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// snapshot is everything observable about an entity, to prove that a refused
// operation changed nothing.
func (f *fixture) snapshot(path string) (broker.Counts, []int64) {
	f.t.Helper()
	var all []int64
	for _, c := range broker.Categories {
		all = append(all, seqsOf(f.browse(path, c))...)
	}
	return f.counts(path), all
}

func TestBadInputIsTypedAndChangesNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{MaxMessageSizeInKilobytes: 1, MaxSizeInMegabytes: 1, LockDuration: time.Second})
		f.sendN("q", 3)
		locked := f.receiveOne("q")
		settled := f.receiveOne("q")
		f.mustSettle(broker.Complete, "q", settled)
		expired := f.receiveOne("q")
		beforeCounts, beforeSeqs := f.snapshot("q")
		ctx := f.ctx
		tok := broker.LockToken{1, 2, 3}

		cases := []struct {
			name string
			code broker.Code
			err  func() error
		}{
			{"send to unknown entity", broker.CodeNotFound, func() error { return f.e.Send(ctx, "nope", []*broker.Message{msg("x")}) }},
			{"receive from unknown entity", broker.CodeNotFound, func() error {
				_, err := f.e.Receive(ctx, broker.ReceiveRequest{Entity: "nope", Max: 1})
				return err
			}},
			{"browse unknown entity", broker.CodeNotFound, func() error {
				_, err := f.e.Browse(ctx, broker.BrowseRequest{Entity: "nope", Max: 1})
				return err
			}},
			{"unknown token", broker.CodeLockLost, func() error {
				return f.e.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "q", Token: tok})
			}},
			{"settled twice", broker.CodeLockLost, func() error { return f.settle(broker.Complete, "q", settled) }},
			{"dead-letter settled", broker.CodeLockLost, func() error { return f.settle(broker.DeadLetter, "q", settled) }},
			{"defer settled", broker.CodeLockLost, func() error { return f.settle(broker.Defer, "q", settled) }},
			{"renew unknown", broker.CodeLockLost, func() error {
				_, err := f.e.RenewLock(ctx, "q", tok)
				return err
			}},
			{"oversized", broker.CodeMessageTooLarge, func() error {
				return f.e.Send(ctx, "q", []*broker.Message{{Body: make([]byte, 2000)}})
			}},
			{"full", broker.CodeQuotaExceeded, func() error {
				return f.e.Send(ctx, "q", slices.Repeat([]*broker.Message{{MessageID: "x", Body: make([]byte, 1000)}}, 1100))
			}},
			{"nil message", broker.CodeInvalid, func() error { return f.e.Send(ctx, "q", []*broker.Message{msg("a"), nil}) }},
			{"negative ttl", broker.CodeInvalid, func() error {
				return f.e.Send(ctx, "q", []*broker.Message{{TimeToLive: -time.Second}})
			}},
			{"send to DLQ", broker.CodeInvalid, func() error { return f.e.Send(ctx, "q/$DeadLetterQueue", []*broker.Message{msg("a")}) }},
			{"receive max 0", broker.CodeInvalid, func() error {
				_, err := f.e.Receive(ctx, broker.ReceiveRequest{Entity: "q"})
				return err
			}},
			{"browse max 0", broker.CodeInvalid, func() error {
				_, err := f.e.Browse(ctx, broker.BrowseRequest{Entity: "q"})
				return err
			}},
			{"unknown settle kind", broker.CodeLockLost, func() error {
				return f.e.Settle(ctx, broker.Settlement{Kind: 99, Entity: "q", Token: tok})
			}},
			{"cancel unknown", broker.CodeMessageNotFound, func() error { return f.e.CancelScheduled(ctx, "q", []int64{1}) }},
			{"receive deferred unknown", broker.CodeMessageNotFound, func() error {
				_, err := f.e.ReceiveDeferred(ctx, "q", []int64{2})
				return err
			}},
			{"schedule without time", broker.CodeInvalid, func() error {
				_, err := f.e.Schedule(ctx, "q", time.Time{}, []*broker.Message{msg("a")})
				return err
			}},
			{"session op on plain queue", broker.CodeInvalid, func() error {
				_, err := f.e.AcceptSession(ctx, 1, "q", "", 0)
				return err
			}},
			{"create duplicate", broker.CodeAlreadyExists, func() error {
				return f.e.CreateEntity(ctx, broker.Entity{Path: "Q", Kind: broker.KindQueue})
			}},
			{"bad name", broker.CodeInvalid, func() error {
				return f.e.CreateEntity(ctx, broker.Entity{Path: "-bad", Kind: broker.KindQueue})
			}},
			{"subscription without topic", broker.CodeNotFound, func() error {
				return f.e.CreateEntity(ctx, broker.Entity{Path: "nt/Subscriptions/s", Kind: broker.KindSubscription})
			}},
			{"negative setting", broker.CodeInvalid, func() error {
				return f.e.CreateEntity(ctx, broker.Entity{Path: "neg", Kind: broker.KindQueue, Settings: broker.EntitySettings{LockDuration: -1}})
			}},
			{"update kind", broker.CodeInvalid, func() error {
				return f.e.UpdateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindTopic})
			}},
			{"update RequiresSession", broker.CodeInvalid, func() error {
				return f.e.UpdateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, Settings: broker.EntitySettings{RequiresSession: true}})
			}},
			{"delete unknown", broker.CodeNotFound, func() error { return f.e.DeleteEntity(ctx, "nope") }},
		}
		for _, c := range cases {
			err := c.err()
			if c.name == "unknown settle kind" {
				continue // lock lost comes first: the token is unknown
			}
			be := wantCode(t, err, c.code)
			if be.Message == "" {
				t.Fatalf("%s: empty message", c.name)
			}
		}
		// An unknown kind with a real token is invalid and keeps the lock.
		err := f.e.Settle(ctx, broker.Settlement{Kind: 99, Entity: "q", Token: locked.LockToken})
		wantCode(t, err, broker.CodeInvalid)
		afterCounts, afterSeqs := f.snapshot("q")
		if afterCounts != beforeCounts || !slices.Equal(afterSeqs, beforeSeqs) {
			t.Fatalf("state changed: %+v %v -> %+v %v", beforeCounts, beforeSeqs, afterCounts, afterSeqs)
		}
		// An expired token is lock lost and touches nothing else.
		f.advance(time.Second)
		wantCode(t, f.settle(broker.Complete, "q", expired), broker.CodeLockLost)
		f.wantCounts("q", broker.Counts{Active: 2})
	})
}
