package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// allSettings sets every entity setting to a value other than its default.
func allSettings() broker.EntitySettings {
	return broker.EntitySettings{
		LockDuration:                        time.Minute,
		MaxDeliveryCount:                    4,
		DefaultMessageTimeToLive:            time.Hour,
		DeadLetteringOnMessageExpiration:    true,
		RequiresDuplicateDetection:          true,
		DuplicateDetectionHistoryTimeWindow: time.Minute,
		ForwardDeadLetteredMessagesTo:       "dlq",
		ForwardDeadLetteredMessagesToURI:    "https://ns.example/DLQ",
		MaxSizeInMegabytes:                  2048,
		MaxMessageSizeInKilobytes:           512,
		Status:                              broker.StatusSendDisabled,
		AutoDeleteOnIdle:                    time.Hour,
		EnablePartitioning:                  true,
		DisableBatchedOperations:            true,
	}
}

var testAuthRules = []broker.AuthorizationRule{
	{KeyName: "sender", PrimaryKey: "p1", SecondaryKey: "s1", Rights: broker.RightSend,
		CreatedTime: t0.Add(-time.Hour), ModifiedTime: t0.Add(-time.Minute)},
	{KeyName: "admin", PrimaryKey: "p2", Rights: broker.AllRights},
}

// TestEntitySettingsRoundTrip: every setting and the authorization rules
// come back as given, after an update and after a restart.
func TestEntitySettingsRoundTrip(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("dlq", broker.EntitySettings{})
		want := broker.Entity{Path: "q", Kind: broker.KindQueue, Settings: allSettings(), AuthorizationRules: slices.Clone(testAuthRules)}
		if err := f.e.CreateEntity(f.ctx, want); err != nil {
			t.Fatal(err)
		}
		check := func(e *Engine, rules []broker.AuthorizationRule) {
			t.Helper()
			got, err := e.Entity(f.ctx, "q")
			if err != nil {
				t.Fatal(err)
			}
			if got.Settings != want.Settings || !reflect.DeepEqual(got.AuthorizationRules, rules) {
				t.Fatalf("got %+v\n%+v\nwant %+v\n%+v", got.Settings, got.AuthorizationRules, want.Settings, rules)
			}
		}
		check(f.e, testAuthRules)
		// The engine keeps its own copy of the rules.
		want.AuthorizationRules[1].KeyName = "changed"
		check(f.e, testAuthRules)
		// An update replaces the rules (none: nil) and the settings.
		want.Settings.Status = broker.StatusReceiveDisabled
		want.Settings.AutoDeleteOnIdle = 2 * time.Hour
		want.AuthorizationRules = nil
		if err := f.e.UpdateEntity(f.ctx, want); err != nil {
			t.Fatal(err)
		}
		check(f.e, nil)
		want.AuthorizationRules = testAuthRules[:1]
		if err := f.e.UpdateEntity(f.ctx, want); err != nil {
			t.Fatal(err)
		}
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		check(g.e, testAuthRules[:1])
	})
}

// TestForwardURIKeptOnlyForItsEntity: a forwarding URI that names another
// entity than the forwarding target is dropped.
func TestForwardURIKeptOnlyForItsEntity(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("a", broker.EntitySettings{})
	f.queue("q", broker.EntitySettings{ForwardTo: "a", ForwardToURI: "sb://ns/b", ForwardDeadLetteredMessagesTo: "a", ForwardDeadLetteredMessagesToURI: "sb://ns/A/"})
	ent, _ := f.e.Entity(f.ctx, "q")
	if ent.Settings.ForwardToURI != "" || ent.Settings.ForwardDeadLetteredMessagesToURI != "sb://ns/A/" {
		t.Fatalf("URIs = %q, %q", ent.Settings.ForwardToURI, ent.Settings.ForwardDeadLetteredMessagesToURI)
	}
}

// TestAuthorizationRulesChecked: rules without a name or key, with a name
// twice, or with no rights are refused.
func TestAuthorizationRulesChecked(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	ok := broker.AuthorizationRule{KeyName: "k", PrimaryKey: "p", Rights: broker.RightListen}
	for _, c := range []struct {
		rules []broker.AuthorizationRule
		want  string
	}{
		{[]broker.AuthorizationRule{{PrimaryKey: "p", Rights: broker.RightSend}}, "authorization rule 0 has no KeyName"},
		{[]broker.AuthorizationRule{{KeyName: "k", Rights: broker.RightSend}}, `authorization rule "k" has no PrimaryKey`},
		{[]broker.AuthorizationRule{{KeyName: "k", PrimaryKey: "p"}}, `authorization rule "k" grants no rights; give Manage, Send or Listen`},
		{[]broker.AuthorizationRule{{KeyName: "k", PrimaryKey: "p", Rights: 8}}, `authorization rule "k" has unknown rights 0x8`},
		{[]broker.AuthorizationRule{ok, {KeyName: "K", PrimaryKey: "p", Rights: broker.RightSend}}, `two authorization rules are named "K"`},
		{slices.Repeat([]broker.AuthorizationRule{ok}, 13), "an entity has at most 12 authorization rules, not 13"},
	} {
		err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, AuthorizationRules: c.rules})
		if be := wantCode(t, err, broker.CodeInvalid); be.Message != c.want {
			t.Errorf("message = %q, want %q", be.Message, c.want)
		}
	}
}

// TestPartitioning: EnablePartitioning cannot change on a queue or topic
// (worded as Service Bus words it); a subscription takes its topic's.
func TestPartitioning(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		ctx := f.ctx
		f.queue("q", broker.EntitySettings{EnablePartitioning: true})
		err := f.e.UpdateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue})
		if be := wantCode(t, err, broker.CodeInvalid); be.Message != "Partitioning cannot be changed for Queue" {
			t.Fatalf("message = %q", be.Message)
		}
		if err := f.e.CreateEntity(ctx, broker.Entity{Path: "t", Kind: broker.KindTopic, Settings: broker.EntitySettings{EnablePartitioning: true}}); err != nil {
			t.Fatal(err)
		}
		if err := f.e.CreateEntity(ctx, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription}); err != nil {
			t.Fatal(err)
		}
		// A subscription's update cannot take the setting away.
		if err := f.e.UpdateEntity(ctx, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription}); err != nil {
			t.Fatal(err)
		}
		if ent, _ := f.e.Entity(ctx, "t/Subscriptions/s"); !ent.Settings.EnablePartitioning {
			t.Fatal("the subscription of a partitioned topic is not partitioned")
		}
		err = f.e.UpdateEntity(ctx, broker.Entity{Path: "t", Kind: broker.KindTopic})
		if be := wantCode(t, err, broker.CodeInvalid); be.Message != "Partitioning cannot be changed for Topic" {
			t.Fatalf("message = %q", be.Message)
		}
		err = f.e.UpdateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, Settings: broker.EntitySettings{EnablePartitioning: true, RequiresSession: true}})
		if be := wantCode(t, err, broker.CodeInvalid); be.Message != "The value for the RequiresSession property of an existing Queue cannot be changed." {
			t.Fatalf("message = %q", be.Message)
		}
		// Sequence numbers carry partition 0 in their top 16 bits.
		f.send("q", msg("a"))
		if got := f.receiveOne("q"); got.SequenceNumber != 1 {
			t.Fatalf("sequence number %#x", got.SequenceNumber)
		}
	})
}

// TestPartitionKeyMustMatchSessionID: a message with both a PartitionKey and
// a SessionId must have the same value in each, as Service Bus requires;
// either alone is fine.
func TestPartitionKeyMustMatchSessionID(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{EnablePartitioning: true})
	f.queue("s", broker.EntitySettings{RequiresSession: true})
	bad := sessionMsg("bad", "A")
	bad.PartitionKey = "B"
	for _, path := range []string{"q", "s"} {
		err := f.e.Send(f.ctx, path, []*broker.Message{msg("ok"), bad})
		if be := wantCode(t, err, broker.CodeInvalid); be.Message != `message 1 has PartitionKey "B" and SessionId "A": a message that has both must have the same value in each` {
			t.Fatalf("message = %q", be.Message)
		}
	}
	f.wantCounts("q", broker.Counts{})
	same := sessionMsg("same", "A")
	same.PartitionKey = "A"
	pk := msg("pk")
	pk.PartitionKey = "P"
	f.send("q", same, pk)
	f.send("s", same)
	f.wantCounts("q", broker.Counts{Active: 2})
}

// TestUpdateKeepsSessionLock: an update loses the message locks, but a
// session receiver keeps its session lock and receives the message whose
// lock was lost again (the Go SDK's TestSessionReceiver_Detach).
func TestUpdateKeepsSessionLock(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		ctx := f.ctx
		f.queue("s", broker.EntitySettings{RequiresSession: true})
		f.send("s", sessionMsg("a1", "A"), sessionMsg("a2", "A"))
		lock, err := f.e.AcceptSession(ctx, 1, "s", "A", 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.e.ReceiveSession(ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("receive = %v, %v", got, err)
		}
		if err := f.e.UpdateEntity(ctx, broker.Entity{Path: "s", Kind: broker.KindQueue, Settings: broker.EntitySettings{RequiresSession: true, MaxDeliveryCount: 5}}); err != nil {
			t.Fatal(err)
		}
		wantCode(t, f.settle(broker.Complete, "s", got[0]), broker.CodeSessionLockLost)
		if _, err := f.e.SessionState(ctx, "s", "A"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.e.HeldSessionState(ctx, 1, "s", "A"); err != nil {
			t.Fatalf("session state after the update: %v", err)
		}
		again, err := f.e.ReceiveSession(ctx, 1, "A", broker.ReceiveRequest{Entity: "s", Max: 5})
		if err != nil || !slices.Equal(idsOf(again), []string{"a1", "a2"}) {
			t.Fatalf("receive after the update = %v, %v", idsOf(again), err)
		}
		f.mustSettle(broker.Complete, "s", again[0])
		if _, err := f.e.RenewSessionLock(ctx, 1, "s", lock.SessionID); err != nil {
			t.Fatal(err)
		}
		_, err = f.e.AcceptSession(ctx, 2, "s", "A", 0)
		wantCode(t, err, broker.CodeSessionCannotLock)
	})
}
