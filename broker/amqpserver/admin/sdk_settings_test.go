package admin

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/peeklock/peeklock/broker"
)

// authRulesForTest are rules as the SDK's own tests send them: no times.
func authRulesForTest() []sbadmin.AuthorizationRule {
	return []sbadmin.AuthorizationRule{
		{AccessRights: []sbadmin.AccessRight{sbadmin.AccessRightSend}, KeyName: ptr("keyName1"),
			PrimaryKey: ptr("cHJpbWFyeS1rZXktZm9yLXRlc3Rz"), SecondaryKey: ptr("c2Vjb25kYXJ5LWtleS1mb3ItdGVzdHM=")},
		{AccessRights: []sbadmin.AccessRight{sbadmin.AccessRightManage, sbadmin.AccessRightSend, sbadmin.AccessRightListen}, KeyName: ptr("all"),
			PrimaryKey: ptr("a2V5"), CreatedTime: ptr(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)), ModifiedTime: ptr(time.Date(2024, 5, 7, 7, 8, 9, 500, time.UTC))},
	}
}

// TestSDKQueueSettings: status, auto-delete, partitioning (16 partitions:
// the size reported is 16 times the one given, and sending it back keeps
// it), batched operations and authorization rules round-trip through the
// SDK's admin client and reach the engine; a round trip of what GetQueue
// returned changes nothing (TestAdminClient_CreateQueue_Standard).
func TestSDKQueueSettings(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	es := sbadmin.EntityStatusReceiveDisabled
	props := sbadmin.QueueProperties{
		EnablePartitioning:      ptr(true),
		MaxSizeInMegabytes:      ptr(int32(4096)),
		EnableBatchedOperations: ptr(false),
		Status:                  &es,
		AutoDeleteOnIdle:        ptr("PT10M"),
		AuthorizationRules:      authRulesForTest(),
	}
	created, err := c.CreateQueue(f.ctx, "q", &sbadmin.CreateQueueOptions{Properties: &props})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got sbadmin.QueueProperties) {
		t.Helper()
		if *got.MaxSizeInMegabytes != 16*4096 || !*got.EnablePartitioning || *got.EnableBatchedOperations || *got.Status != es ||
			*got.AutoDeleteOnIdle != "PT10M" || !reflect.DeepEqual(got.AuthorizationRules, authRulesForTest()) {
			t.Fatalf("%s: %s", what, dump(got))
		}
	}
	check("CreateQueue", created.QueueProperties)
	got, err := c.GetQueue(f.ctx, "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	check("GetQueue", got.QueueProperties)
	updated, err := c.UpdateQueue(f.ctx, "q", got.QueueProperties, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("UpdateQueue", updated.QueueProperties)

	ent, err := f.eng.Entity(f.ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	s := ent.Settings
	if s.Status != broker.StatusReceiveDisabled || s.AutoDeleteOnIdle != 10*time.Minute || !s.EnablePartitioning ||
		!s.DisableBatchedOperations || s.MaxSizeInMegabytes != 16*4096 || len(ent.AuthorizationRules) != 2 ||
		ent.AuthorizationRules[0].Rights != broker.RightSend || ent.AuthorizationRules[1].Rights != broker.AllRights {
		t.Fatalf("engine: %+v %+v", s, ent.AuthorizationRules)
	}
	rt, err := c.GetQueueRuntimeProperties(f.ctx, "q", nil)
	if err != nil || !rt.AccessedAt.IsZero() {
		t.Fatalf("runtime properties: %v %+v", err, rt)
	}

	// Partitioning cannot change; the status can.
	updated.EnablePartitioning = ptr(false)
	if _, err := c.UpdateQueue(f.ctx, "q", updated.QueueProperties, nil); err == nil || !strings.Contains(err.Error(), "Partitioning cannot be changed for Queue. ") {
		t.Fatalf("partitioning change: %v", err)
	}
	updated.EnablePartitioning = ptr(true)
	updated.Status = ptr(sbadmin.EntityStatusActive)
	updated.AuthorizationRules = nil
	again, err := c.UpdateQueue(f.ctx, "q", updated.QueueProperties, nil)
	if err != nil || *again.Status != sbadmin.EntityStatusActive || again.AuthorizationRules != nil {
		t.Fatalf("update: %v %s", err, dump(again))
	}
	updated.RequiresSession = ptr(true)
	if _, err := c.UpdateQueue(f.ctx, "q", updated.QueueProperties, nil); err == nil ||
		!strings.Contains(err.Error(), "The value for the RequiresSession property of an existing Queue cannot be changed") {
		t.Fatalf("RequiresSession change: %v", err)
	}
}

// TestSDKForwardingAsGiven: a forwarding target given as an absolute URI is
// reported back as given (TestAdminClient_Queue_Forwarding), one given as a
// name as sb://host/name; both forward to the local entity.
func TestSDKForwardingAsGiven(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	f.create(broker.Entity{Path: "queue-fwd"})
	given := "HTTPS://127.0.0.1/queue-fwd"
	created, err := c.CreateQueue(f.ctx, "q", &sbadmin.CreateQueueOptions{Properties: &sbadmin.QueueProperties{
		ForwardTo: ptr(given), ForwardDeadLetteredMessagesTo: ptr("queue-fwd"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if *created.ForwardTo != "https://127.0.0.1/queue-fwd" || *created.ForwardDeadLetteredMessagesTo != "sb://"+f.host+"/queue-fwd" {
		t.Fatalf("CreateQueue: %s", dump(created.QueueProperties))
	}
	got, err := c.GetQueue(f.ctx, "q", nil)
	if err != nil || !reflect.DeepEqual(got.QueueProperties, created.QueueProperties) {
		t.Fatalf("GetQueue: %v %s", err, dump(got))
	}
	f.send("q", 1)
	if ent, _ := f.eng.Entity(f.ctx, "queue-fwd"); ent.Counts.Active != 1 {
		t.Fatalf("forwarded: %+v", ent.Counts)
	}
}

// TestSDKTopicSettings: a topic's status, auto-delete, partitioning and
// rules round-trip (TestAdminClient_TopicAndSubscription_Standard and
// TestAdminClient_UpdateTopic); a subscription's status, auto-delete and
// batched operations too; a new subscription counts as accessed
// (TestAdminClient_ListSubscriptionRuntimeProperties), and the topic reports
// its scheduled messages (TestAdminClient_TopicAndSubscriptionRuntimeProperties).
func TestSDKTopicSettings(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	active := sbadmin.EntityStatusActive
	created, err := c.CreateTopic(f.ctx, "t", &sbadmin.CreateTopicOptions{Properties: &sbadmin.TopicProperties{
		EnablePartitioning: ptr(true), MaxSizeInMegabytes: ptr(int32(2048)), Status: &active,
		AutoDeleteOnIdle: ptr("PT7M"), SupportOrdering: ptr(true), EnableBatchedOperations: ptr(true),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if *created.MaxSizeInMegabytes != 16*2048 || !*created.EnablePartitioning || *created.AutoDeleteOnIdle != "PT7M" || *created.Status != active {
		t.Fatalf("CreateTopic: %s", dump(created.TopicProperties))
	}
	created.AutoDeleteOnIdle = ptr("PT11M")
	created.AuthorizationRules = authRulesForTest()
	updated, err := c.UpdateTopic(f.ctx, "t", created.TopicProperties, nil)
	if err != nil || *updated.AutoDeleteOnIdle != "PT11M" || !reflect.DeepEqual(updated.AuthorizationRules, authRulesForTest()) {
		t.Fatalf("UpdateTopic: %v %s", err, dump(updated))
	}
	got, err := c.GetTopic(f.ctx, "t", nil)
	if err != nil || !reflect.DeepEqual(got.TopicProperties, updated.TopicProperties) {
		t.Fatalf("GetTopic: %v %s", err, dump(got))
	}
	updated.EnablePartitioning = ptr(false)
	if _, err := c.UpdateTopic(f.ctx, "t", updated.TopicProperties, nil); err == nil || !strings.Contains(err.Error(), "Partitioning cannot be changed for Topic. ") {
		t.Fatalf("partitioning change: %v", err)
	}

	// The Go SDK sends no Status for a subscription (v1.11.0): set it in
	// the engine and read it back.
	sub, err := c.CreateSubscription(f.ctx, "t", "s", &sbadmin.CreateSubscriptionOptions{Properties: &sbadmin.SubscriptionProperties{
		EnableBatchedOperations: ptr(false), AutoDeleteOnIdle: ptr("PT11M"),
	}})
	if err != nil || *sub.Status != active || *sub.EnableBatchedOperations || *sub.AutoDeleteOnIdle != "PT11M" {
		t.Fatalf("CreateSubscription: %v %s", err, dump(sub))
	}
	ent, _ := f.eng.Entity(f.ctx, "t/Subscriptions/s")
	ent.Settings.Status = broker.StatusDisabled
	if err := f.eng.UpdateEntity(f.ctx, ent); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetSubscription(f.ctx, "t", "s", nil); err != nil || *got.Status != sbadmin.EntityStatusDisabled {
		t.Fatalf("GetSubscription: %v %s", err, dump(got))
	}
	sub.LockDuration = ptr("PT4M")
	if _, err := c.UpdateSubscription(f.ctx, "t", "s", sub.SubscriptionProperties, nil); err != nil {
		t.Fatal(err)
	}
	sub.RequiresSession = ptr(true)
	if _, err := c.UpdateSubscription(f.ctx, "t", "s", sub.SubscriptionProperties, nil); err == nil ||
		!strings.Contains(err.Error(), "The value for the RequiresSession property of an existing Subscription cannot be changed") {
		t.Fatalf("RequiresSession change: %v", err)
	}
	pager := c.NewListSubscriptionsRuntimePropertiesPager("t", nil)
	page, err := pager.NextPage(f.ctx)
	if err != nil || len(page.SubscriptionRuntimeProperties) != 1 || page.SubscriptionRuntimeProperties[0].AccessedAt.IsZero() {
		t.Fatalf("subscription runtime properties: %v %s", err, dump(page))
	}
	if ent, _ := f.eng.Entity(f.ctx, "t/Subscriptions/s"); !ent.Settings.EnablePartitioning || ent.Settings.LockDuration != 4*time.Minute {
		t.Fatalf("engine subscription: %+v", ent.Settings)
	}

	// A message scheduled to the topic counts once, however many
	// subscriptions take it.
	if _, err := c.CreateSubscription(f.ctx, "t", "s2", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Schedule(context.Background(), "t", f.clock.Now().Add(time.Hour), []*broker.Message{{Body: []byte("later")}}); err != nil {
		t.Fatal(err)
	}
	trp, err := c.GetTopicRuntimeProperties(f.ctx, "t", nil)
	if err != nil || trp.ScheduledMessageCount != 1 {
		t.Fatalf("topic runtime properties: %v %s", err, dump(trp))
	}
}
