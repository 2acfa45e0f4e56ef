package remote

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
)

// TestServeEntityTimesAndMetadata: Entities carries the CreatedAt,
// UpdatedAt, AccessedAt and UserMetadata that the admin API reports.
func TestServeEntityTimesAndMetadata(t *testing.T) {
	created := time.Now().Truncate(time.Second).UTC()
	clock := clockwork.NewFakeClockAt(created)
	env := newServe(t, clock)
	ctx := context.Background()
	if err := env.eng.CreateEntity(ctx, broker.Entity{Path: "orders", UserMetadata: "owner: payments"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(1500 * time.Millisecond)
	if err := env.eng.UpdateEntity(ctx, broker.Entity{Path: "orders", UserMetadata: "owner: ledger"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := env.eng.Send(ctx, "orders", textMessages(1)); err != nil {
		t.Fatal(err)
	}
	c := env.dial(env.config(""))
	ents, err := c.Entities(ctx)
	if err != nil || len(ents) != 1 {
		t.Fatalf("Entities = %+v, %v", ents, err)
	}
	e := ents[0]
	if e.UserMetadata != "owner: ledger" || !e.CreatedAt.Equal(created) ||
		!e.UpdatedAt.Equal(created.Add(1500*time.Millisecond)) || !e.AccessedAt.Equal(created.Add(2*time.Second)) {
		t.Fatalf("UserMetadata %q, CreatedAt %v, UpdatedAt %v, AccessedAt %v", e.UserMetadata, e.CreatedAt, e.UpdatedAt, e.AccessedAt)
	}
}

// TestServeEntitySettings: Entities carries the status, auto-delete,
// partitioning, batched operations, forwarding URIs and authorization rules
// that the admin API reports, so that the dashboard shows them for a remote
// endpoint as for the embedded engine.
func TestServeEntitySettings(t *testing.T) {
	env := newServe(t, clockwork.NewRealClock())
	ctx := context.Background()
	env.queue("target", broker.EntitySettings{})
	rules := []broker.AuthorizationRule{
		{KeyName: "sender", PrimaryKey: "p", SecondaryKey: "s", Rights: broker.RightSend | broker.RightListen,
			CreatedTime: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)},
	}
	want := broker.Entity{Path: "q", Kind: broker.KindQueue, AuthorizationRules: rules, Settings: broker.EntitySettings{
		Status: broker.StatusReceiveDisabled, AutoDeleteOnIdle: time.Hour, EnablePartitioning: true, DisableBatchedOperations: true,
		ForwardTo: "target", ForwardToURI: "https://example.servicebus.windows.net/target", MaxSizeInMegabytes: 16384,
	}}
	if err := env.eng.CreateEntity(ctx, want); err != nil {
		t.Fatal(err)
	}
	eng, _ := env.eng.Entity(ctx, "q")
	c := env.dial(env.config(""))
	ents, err := c.Entities(ctx)
	if err != nil || len(ents) != 2 {
		t.Fatalf("Entities = %+v, %v", ents, err)
	}
	got := ents[0]
	if got.Settings != eng.Settings {
		t.Fatalf("settings:\n got %+v\nwant %+v", got.Settings, eng.Settings)
	}
	if len(got.AuthorizationRules) != 1 || got.AuthorizationRules[0] != rules[0] {
		t.Fatalf("authorization rules = %+v", got.AuthorizationRules)
	}
	if ents[1].Settings.Status != broker.StatusActive || ents[1].Settings.DisableBatchedOperations || ents[1].AuthorizationRules != nil {
		t.Fatalf("target = %+v", ents[1])
	}
}
