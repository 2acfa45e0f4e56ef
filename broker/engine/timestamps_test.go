package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/emulatorconfig"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// wantTimes checks an entity's CreatedAt, UpdatedAt and AccessedAt.
func (f *fixture) wantTimes(path string, created, updated, accessed time.Time) broker.Entity {
	f.t.Helper()
	ent, err := f.e.Entity(f.ctx, path)
	if err != nil {
		f.t.Fatalf("entity %s: %v", path, err)
	}
	if !ent.CreatedAt.Equal(created) || !ent.UpdatedAt.Equal(updated) || !ent.AccessedAt.Equal(accessed) {
		f.t.Fatalf("%s: CreatedAt %v, UpdatedAt %v, AccessedAt %v; want %v, %v, %v",
			path, ent.CreatedAt, ent.UpdatedAt, ent.AccessedAt, created, updated, accessed)
	}
	for _, tm := range []time.Time{ent.CreatedAt, ent.UpdatedAt, ent.AccessedAt} {
		if tm.Location() != time.UTC {
			f.t.Fatalf("%s: time %v is not in UTC", path, tm)
		}
	}
	return ent
}

func TestEntityTimestamps(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		// The caller's times are ignored.
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, UserMetadata: "team: payments",
			CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0.Add(time.Hour), AccessedAt: t0}); err != nil {
			t.Fatal(err)
		}
		ent := f.wantTimes("q", t0, t0, time.Time{})
		if ent.UserMetadata != "team: payments" {
			t.Fatalf("UserMetadata = %q", ent.UserMetadata)
		}

		// A send sets AccessedAt, to the second.
		f.advance(10*time.Second + 700*time.Millisecond)
		f.send("q", msg("a"), msg("b"))
		sent := t0.Add(10 * time.Second)
		f.wantTimes("q", t0, t0, sent)
		// Browsing and settling are no access; a receive request is, even
		// when it finds nothing.
		f.advance(5 * time.Second)
		f.browse("q", broker.CategoryActive)
		got := f.receive("q", 2)
		f.advance(5 * time.Second)
		f.mustSettle(broker.Complete, "q", got[0])
		f.mustSettle(broker.Defer, "q", got[1])
		f.wantTimes("q", t0, t0, sent.Add(5*time.Second))
		f.receive("q", 1) // empty: the other one is deferred
		f.wantTimes("q", t0, t0, sent.Add(10*time.Second))
		f.advance(time.Second)
		if _, err := f.e.ReceiveDeferred(f.ctx, "q", []int64{got[1].SequenceNumber}); err != nil {
			t.Fatal(err)
		}
		accessed := sent.Add(11 * time.Second)
		f.wantTimes("q", t0, t0, accessed)

		// An update sets UpdatedAt and replaces UserMetadata.
		f.advance(time.Minute)
		updated := t0.Add(time.Minute + 21*time.Second + 700*time.Millisecond)
		if err := f.e.UpdateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, UserMetadata: "team: ledger",
			CreatedAt: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if ent := f.wantTimes("q", t0, updated, accessed); ent.UserMetadata != "team: ledger" {
			t.Fatalf("UserMetadata after update = %q", ent.UserMetadata)
		}

		// CreatedAt, UpdatedAt and UserMetadata survive a restart where the
		// store does; AccessedAt is kept in memory only.
		durable := f.e.store.Durable()
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		ent = g.wantTimes("q", t0, updated, time.Time{})
		if ent.UserMetadata != "team: ledger" {
			t.Fatalf("UserMetadata after restart = %q (durable %v)", ent.UserMetadata, durable)
		}
	})
}

func TestTopicAndSubscriptionTimestamps(t *testing.T) {
	f := topicFixture(t, store.NewMemory())
	f.advance(3 * time.Second)
	f.send("t", msg("m"))
	// The topic is accessed; its subscriptions were when created (as Service
	// Bus reports them), and the fan-out does not access them.
	f.wantTimes("t", t0, t0, t0.Add(3*time.Second))
	f.wantTimes("t/Subscriptions/all", t0, t0, t0)
	f.advance(2 * time.Second)
	f.receiveOne("t/Subscriptions/all")
	f.wantTimes("t/Subscriptions/all", t0, t0, t0.Add(5*time.Second))
	// A send straight to a subscription accesses it.
	f.advance(2 * time.Second)
	f.send("t/Subscriptions/red", msg("direct"))
	f.wantTimes("t/Subscriptions/red", t0, t0, t0.Add(7*time.Second))
	// Receiving from the dead-letter sub-queue accesses the entity.
	f.advance(2 * time.Second)
	f.receive("t/Subscriptions/orders"+broker.DeadLetterSuffix, 1)
	f.wantTimes("t/Subscriptions/orders", t0, t0, t0.Add(9*time.Second))

	// A topic's update passes its size limits on without touching its
	// subscriptions' UpdatedAt.
	f.advance(time.Second)
	if err := f.e.UpdateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic, Settings: broker.EntitySettings{MaxSizeInMegabytes: 2048}}); err != nil {
		t.Fatal(err)
	}
	f.wantTimes("t", t0, t0.Add(10*time.Second), t0.Add(3*time.Second))
	if ent := f.wantTimes("t/Subscriptions/all", t0, t0, t0.Add(5*time.Second)); ent.Settings.MaxSizeInMegabytes != 2048 {
		t.Fatalf("inherited MaxSizeInMegabytes = %d", ent.Settings.MaxSizeInMegabytes)
	}
}

func TestAccessedAtNeverMovesBack(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{})
	f.send("q", msg("a"))
	f.clock.Advance(-time.Minute)
	f.send("q", msg("b"))
	f.wantTimes("q", t0, t0, t0)
}

func TestUserMetadataLength(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	// Service Bus counts UTF-16 code units: "é" is one, "😀" two.
	ok := strings.Repeat("é", broker.MaxUserMetadataLength)
	if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, UserMetadata: ok}); err != nil {
		t.Fatalf("1024 characters refused: %v", err)
	}
	long := strings.Repeat("😀", broker.MaxUserMetadataLength/2) + "x"
	const want = "UserMetadata is 1025 characters long; at most 1024 are allowed"
	for _, err := range []error{
		f.e.CreateEntity(f.ctx, broker.Entity{Path: "q2", Kind: broker.KindQueue, UserMetadata: long}),
		f.e.UpdateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, UserMetadata: long}),
	} {
		if be := wantCode(t, err, broker.CodeInvalid); be.Message != want {
			t.Fatalf("message = %q, want %q", be.Message, want)
		}
	}
	if _, err := f.e.Entity(f.ctx, "q2"); broker.CodeOf(err) != broker.CodeNotFound {
		t.Fatalf("q2 was created: %v", err)
	}
	if ent, _ := f.e.Entity(f.ctx, "q"); ent.UserMetadata != ok {
		t.Fatalf("UserMetadata changed by a refused update: %d bytes", len(ent.UserMetadata))
	}
}

// TestApplyConfigKeepsTimesAndMetadata: applying an unchanged configuration
// updates nothing (rule times, which a configuration has none of, do not
// count as a change), and a changed one keeps the UserMetadata it cannot
// express.
func TestApplyConfigKeepsTimesAndMetadata(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	cfg, err := emulatorconfig.Parse([]byte(emulatorConfig))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
		t.Fatal(err)
	}
	const sub = "topic.1/Subscriptions/subscription.1"
	ent := f.wantTimes(sub, t0, t0, t0)
	if len(ent.Rules) == 0 || !ent.Rules[0].CreatedAt.Equal(t0) {
		t.Fatalf("rules after ApplyConfig: %+v", ent.Rules)
	}
	f.advance(time.Minute)
	ent.UserMetadata = "kept"
	if err := f.e.UpdateEntity(f.ctx, ent); err != nil {
		t.Fatal(err)
	}
	f.advance(time.Minute)
	if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
		t.Fatal(err)
	}
	f.wantTimes(sub, t0, t0.Add(time.Minute), t0)
	for i := range cfg.Entities {
		if cfg.Entities[i].Path == sub {
			cfg.Entities[i].Settings.MaxDeliveryCount = 9
		}
	}
	if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
		t.Fatal(err)
	}
	ent = f.wantTimes(sub, t0, t0.Add(2*time.Minute), t0)
	if ent.UserMetadata != "kept" || ent.Settings.MaxDeliveryCount != 9 || !ent.Rules[0].CreatedAt.Equal(t0) {
		t.Fatalf("after a configuration change: UserMetadata %q, MaxDeliveryCount %d, rule CreatedAt %v",
			ent.UserMetadata, ent.Settings.MaxDeliveryCount, ent.Rules[0].CreatedAt)
	}
}

// entityWrites is a memory store that counts stored entity records.
type entityWrites struct {
	store.Store
	puts int
}

func (s *entityWrites) Apply(b *store.Batch) (store.Pending, error) {
	for _, op := range b.Ops {
		if op.Kind == store.OpPutEntity {
			s.puts++
		}
	}
	return s.Store.Apply(b)
}

// TestAccessedAtIsNotStored: sending and receiving write no entity record.
func TestAccessedAtIsNotStored(t *testing.T) {
	st := &entityWrites{Store: store.NewMemory()}
	f := newFixture(t, st)
	f.queue("q", broker.EntitySettings{})
	if st.puts != 1 {
		t.Fatalf("%d entity records written by CreateEntity, want 1", st.puts)
	}
	for range 3 {
		f.advance(time.Second)
		f.send("q", msg("m"))
		f.mustSettle(broker.Complete, "q", f.receiveOne("q"))
	}
	f.wantTimes("q", t0, t0, t0.Add(3*time.Second))
	if st.puts != 1 {
		t.Fatalf("%d entity records written after sends and receives, want still 1", st.puts)
	}
}
