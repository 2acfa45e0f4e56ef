package admin

import (
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/peeklock/peeklock/broker"
)

func TestSDKTopicsAndSubscriptions(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	_, err := c.CreateTopic(f.ctx, "events", &sbadmin.CreateTopicOptions{Properties: &sbadmin.TopicProperties{
		DefaultMessageTimeToLive:   ptr("PT1H"),
		RequiresDuplicateDetection: ptr(true),
		MaxMessageSizeInKilobytes:  ptr(int64(1024)),
	}})
	if err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	f.create(broker.Entity{Path: "sink"})
	for _, s := range []string{"s3", "s1", "s2"} {
		if _, err := c.CreateSubscription(f.ctx, "events", s, nil); err != nil {
			t.Fatalf("CreateSubscription %s: %v", s, err)
		}
	}
	created, err := c.CreateSubscription(f.ctx, "events", "audit", &sbadmin.CreateSubscriptionOptions{Properties: &sbadmin.SubscriptionProperties{
		LockDuration:                     ptr("PT2M"),
		RequiresSession:                  ptr(false),
		DefaultMessageTimeToLive:         ptr("PT30M"),
		DeadLetteringOnMessageExpiration: ptr(true),
		MaxDeliveryCount:                 ptr(int32(4)),
		ForwardTo:                        ptr("sink"),
	}})
	if err != nil {
		t.Fatalf("CreateSubscription audit: %v", err)
	}
	if created.SubscriptionName != "audit" || created.TopicName != "events" || *created.ForwardTo != "sb://"+f.host+"/sink" {
		t.Fatalf("CreateSubscription answered %s", dump(created))
	}
	ent, err := f.eng.Entity(f.ctx, "events/Subscriptions/audit")
	if err != nil {
		t.Fatalf("engine Entity: %v", err)
	}
	want := broker.EntitySettings{
		LockDuration:                        2 * time.Minute,
		MaxDeliveryCount:                    4,
		DefaultMessageTimeToLive:            30 * time.Minute,
		DeadLetteringOnMessageExpiration:    true,
		DuplicateDetectionHistoryTimeWindow: broker.DefaultDuplicateWindow,
		ForwardTo:                           "sink",
		MaxSizeInMegabytes:                  1024,
		MaxMessageSizeInKilobytes:           1024, // from the topic
		AutoDeleteOnIdle:                    broker.MaxTimeToLive,
	}
	if ent.Kind != broker.KindSubscription || ent.Settings != want || len(ent.Rules) != 1 || ent.Rules[0].Name != "$Default" {
		t.Fatalf("engine subscription:\n got %+v %v\nwant %+v", ent.Settings, ent.Rules, want)
	}

	topic, err := c.GetTopic(f.ctx, "events", nil)
	if err != nil || topic == nil {
		t.Fatalf("GetTopic: %v, %v", topic, err)
	}
	if *topic.DefaultMessageTimeToLive != "PT1H" || !*topic.RequiresDuplicateDetection || *topic.MaxMessageSizeInKilobytes != 1024 {
		t.Fatalf("GetTopic: %s", dump(topic.TopicProperties))
	}
	tp, err := c.UpdateTopic(f.ctx, "events", sbadmin.TopicProperties{DefaultMessageTimeToLive: ptr("PT2H")}, nil)
	if err != nil || *tp.DefaultMessageTimeToLive != "PT2H" || *tp.RequiresDuplicateDetection {
		t.Fatalf("UpdateTopic: %v %s", err, dump(tp))
	}

	// Subscriptions are listed in name order, in pages.
	var names []string
	pager := c.NewListSubscriptionsPager("events", &sbadmin.ListSubscriptionsOptions{MaxPageSize: 3})
	pages := 0
	for pager.More() {
		p, err := pager.NextPage(f.ctx)
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		if len(p.Subscriptions) > 0 {
			pages++
		}
		for _, s := range p.Subscriptions {
			if s.TopicName != "events" {
				t.Fatalf("subscription %s of topic %q", s.SubscriptionName, s.TopicName)
			}
			names = append(names, s.SubscriptionName)
		}
	}
	if want := []string{"audit", "s1", "s2", "s3"}; !reflect.DeepEqual(names, want) || pages != 2 {
		t.Fatalf("subscriptions %v in %d pages, want %v in 2", names, pages, want)
	}

	// Update a subscription from what Get returned.
	sub, err := c.GetSubscription(f.ctx, "events", "audit", nil)
	if err != nil || sub == nil {
		t.Fatalf("GetSubscription: %v, %v", sub, err)
	}
	props := sub.SubscriptionProperties
	props.MaxDeliveryCount = ptr(int32(9))
	if _, err := c.UpdateSubscription(f.ctx, "events", "audit", props, nil); err != nil {
		t.Fatalf("UpdateSubscription: %v", err)
	}
	ent, _ = f.eng.Entity(f.ctx, "events/Subscriptions/audit")
	if ent.Settings.MaxDeliveryCount != 9 || ent.Settings.ForwardTo != "sink" || ent.Settings.LockDuration != 2*time.Minute {
		t.Fatalf("after UpdateSubscription: %+v", ent.Settings)
	}

	if _, err := c.DeleteSubscription(f.ctx, "events", "s2", nil); err != nil {
		t.Fatalf("DeleteSubscription: %v", err)
	}
	if _, err := f.eng.Entity(f.ctx, "events/Subscriptions/s2"); !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("s2 still exists: %v", err)
	}
	if _, err := c.DeleteTopic(f.ctx, "events", nil); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	if _, err := f.eng.Entity(f.ctx, "events/Subscriptions/s1"); !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("deleting the topic left s1: %v", err)
	}
	if _, err := c.DeleteTopic(f.ctx, "events", nil); statusOfErr(err) != http.StatusNotFound {
		t.Fatalf("DeleteTopic again: %v, want 404", err)
	}
}

func TestSDKTopicRuntimeProperties(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	f.create(
		broker.Entity{Path: "t", Kind: broker.KindTopic},
		broker.Entity{Path: "t/Subscriptions/all", Kind: broker.KindSubscription},
		broker.Entity{Path: "t/Subscriptions/red", Kind: broker.KindSubscription, Rules: []broker.Rule{
			{Name: "red", Filter: &broker.CorrelationFilter{Subject: "red"}},
		}},
		broker.Entity{Path: "other", Kind: broker.KindTopic},
	)
	created := f.clock.Now().UTC()
	f.clock.Advance(time.Second)
	if err := f.eng.Send(f.ctx, "t", []*broker.Message{{Subject: "red"}, {Subject: "blue"}, {Subject: "red"}}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	f.clock.Advance(time.Second)
	got := f.receive("t/Subscriptions/all", 1)
	f.settle(broker.DeadLetter, "t/Subscriptions/all", got[0])

	rp, err := c.GetSubscriptionRuntimeProperties(f.ctx, "t", "all", nil)
	if err != nil || rp == nil {
		t.Fatalf("GetSubscriptionRuntimeProperties: %v, %v", rp, err)
	}
	want := sbadmin.SubscriptionRuntimeProperties{TotalMessageCount: 3, ActiveMessageCount: 2, DeadLetterMessageCount: 1,
		CreatedAt: created, UpdatedAt: created, AccessedAt: created.Add(2 * time.Second)}
	if rp.SubscriptionRuntimeProperties != want {
		t.Fatalf("all:\n got %+v\nwant %+v", rp.SubscriptionRuntimeProperties, want)
	}
	// Fan-out is no access of the subscription: red was never received
	// from, and counts as accessed when it was created (as Service Bus
	// reports a new subscription).
	rp, err = c.GetSubscriptionRuntimeProperties(f.ctx, "t", "red", nil)
	if err != nil || rp.ActiveMessageCount != 2 || rp.TotalMessageCount != 2 || rp.DeadLetterMessageCount != 0 || !rp.AccessedAt.Equal(created) {
		t.Fatalf("red: %v %+v", err, rp)
	}

	all, _ := f.eng.Entity(f.ctx, "t/Subscriptions/all")
	red, _ := f.eng.Entity(f.ctx, "t/Subscriptions/red")
	trp, err := c.GetTopicRuntimeProperties(f.ctx, "t", nil)
	if err != nil || trp == nil {
		t.Fatalf("GetTopicRuntimeProperties: %v, %v", trp, err)
	}
	wantTopic := sbadmin.TopicRuntimeProperties{
		SizeInBytes:            all.Counts.SizeBytes + red.Counts.SizeBytes,
		SubscriptionCount:      2,
		SQLFilterCount:         1, // all's $Default
		CorrelationFilterCount: 1,
		CreatedAt:              created,
		UpdatedAt:              created,
		AccessedAt:             created.Add(time.Second),
	}
	if trp.TopicRuntimeProperties != wantTopic || wantTopic.SizeInBytes <= 0 {
		t.Fatalf("topic runtime:\n got %+v\nwant %+v", trp.TopicRuntimeProperties, wantTopic)
	}

	var counts []int32
	pager := c.NewListTopicsRuntimePropertiesPager(nil)
	for pager.More() {
		p, err := pager.NextPage(f.ctx)
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		for _, tr := range p.TopicRuntimeProperties {
			counts = append(counts, tr.SubscriptionCount)
		}
	}
	if !reflect.DeepEqual(counts, []int32{0, 2}) { // "other", "t"
		t.Fatalf("subscription counts %v, want [0 2]", counts)
	}

	var subs []string
	sp := c.NewListSubscriptionsRuntimePropertiesPager("t", nil)
	for sp.More() {
		p, err := sp.NextPage(f.ctx)
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		for _, s := range p.SubscriptionRuntimeProperties {
			subs = append(subs, s.SubscriptionName)
		}
	}
	if !reflect.DeepEqual(subs, []string{"all", "red"}) {
		t.Fatalf("subscriptions %v", subs)
	}
}

func TestSDKRules(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	f.create(broker.Entity{Path: "t", Kind: broker.KindTopic})
	_, err := c.CreateSubscription(f.ctx, "t", "s", &sbadmin.CreateSubscriptionOptions{Properties: &sbadmin.SubscriptionProperties{
		DefaultRule: &sbadmin.RuleProperties{Name: "orders", Filter: &sbadmin.CorrelationFilter{
			Subject:               ptr("order"),
			ApplicationProperties: map[string]any{"region": "eu", "priority": int64(2)},
		}},
	}})
	if err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	created := f.clock.Now().UTC()
	ent, _ := f.eng.Entity(f.ctx, "t/Subscriptions/s")
	wantRules := []broker.Rule{{Name: "orders", Filter: &broker.CorrelationFilter{Subject: "order", Properties: map[string]any{"region": "eu", "priority": int64(2)}}, CreatedAt: created}}
	if !reflect.DeepEqual(ent.Rules, wantRules) {
		t.Fatalf("engine rules %s, want %s", dump(ent.Rules), dump(wantRules))
	}

	f.clock.Advance(time.Second)
	if _, err := c.CreateRule(f.ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("all"), Filter: &sbadmin.TrueFilter{}}); err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	if _, err := c.CreateRule(f.ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("all"), Filter: &sbadmin.TrueFilter{}}); statusOfErr(err) != http.StatusConflict {
		t.Fatalf("CreateRule again: %v, want 409", err)
	}
	_, err = c.CreateRule(f.ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("sql"), Filter: &sbadmin.SQLFilter{Expression: "a >"}})
	if statusOfErr(err) != http.StatusBadRequest {
		t.Fatalf("CreateRule with a malformed SQL filter: %v, want 400", err)
	}

	got, err := c.GetRule(f.ctx, "t", "s", "orders", nil)
	if err != nil || got == nil {
		t.Fatalf("GetRule: %v, %v", got, err)
	}
	wantFilter := &sbadmin.CorrelationFilter{Subject: ptr("order"), ApplicationProperties: map[string]any{"region": "eu", "priority": int64(2)}}
	if got.Name != "orders" || !reflect.DeepEqual(got.Filter, wantFilter) || got.Action != nil {
		t.Fatalf("GetRule: %s", dump(got.RuleProperties))
	}
	if r, err := c.GetRule(f.ctx, "t", "s", "missing", nil); r != nil || err != nil {
		t.Fatalf("GetRule(missing) = %v, %v; want nil, nil", r, err)
	}

	f.clock.Advance(time.Second)
	upd, err := c.UpdateRule(f.ctx, "t", "s", sbadmin.RuleProperties{Name: "orders", Filter: &sbadmin.CorrelationFilter{CorrelationID: ptr("c-1")}})
	if err != nil || !reflect.DeepEqual(upd.Filter, &sbadmin.CorrelationFilter{CorrelationID: ptr("c-1")}) {
		t.Fatalf("UpdateRule: %v %s", err, dump(upd))
	}
	// A replaced rule keeps its CreatedAt; the subscription was updated.
	ent, _ = f.eng.Entity(f.ctx, "t/Subscriptions/s")
	if !ent.Rules[0].CreatedAt.Equal(created) || !ent.Rules[1].CreatedAt.Equal(created.Add(time.Second)) ||
		!ent.CreatedAt.Equal(created) || !ent.UpdatedAt.Equal(created.Add(2*time.Second)) {
		t.Fatalf("after UpdateRule: created %v, updated %v, rules %s", ent.CreatedAt, ent.UpdatedAt, dump(ent.Rules))
	}

	// Listed by name, as Service Bus lists them, not in the order added.
	var names []string
	var filters []string
	pager := c.NewListRulesPager("t", "s", &sbadmin.ListRulesOptions{MaxPageSize: 1})
	for pager.More() {
		p, err := pager.NextPage(f.ctx)
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		for _, r := range p.Rules {
			names = append(names, r.Name)
			filters = append(filters, reflect.TypeOf(r.Filter).String())
		}
	}
	if !reflect.DeepEqual(names, []string{"all", "orders"}) || !reflect.DeepEqual(filters, []string{"*admin.TrueFilter", "*admin.CorrelationFilter"}) {
		t.Fatalf("rules %v %v", names, filters)
	}

	if _, err := c.DeleteRule(f.ctx, "t", "s", "orders", nil); err != nil {
		t.Fatalf("DeleteRule: %v", err)
	}
	ent, _ = f.eng.Entity(f.ctx, "t/Subscriptions/s")
	if !reflect.DeepEqual(ent.Rules, []broker.Rule{{Name: "all", CreatedAt: created.Add(time.Second)}}) {
		t.Fatalf("engine rules after delete: %s", dump(ent.Rules))
	}
	// The last rule can go: the subscription then lists no rule and gets
	// nothing, as in Service Bus.
	if _, err := c.DeleteRule(f.ctx, "t", "s", "all", nil); err != nil {
		t.Fatalf("deleting the last rule: %v", err)
	}
	pager = c.NewListRulesPager("t", "s", nil)
	for pager.More() {
		p, err := pager.NextPage(f.ctx)
		if err != nil || len(p.Rules) != 0 {
			t.Fatalf("rules after deleting the last: %+v, %v", p.Rules, err)
		}
	}
	if err := f.eng.Send(f.ctx, "t", []*broker.Message{{Subject: "any"}}); err != nil {
		t.Fatal(err)
	}
	if rp, err := c.GetSubscriptionRuntimeProperties(f.ctx, "t", "s", nil); err != nil || rp.TotalMessageCount != 0 {
		t.Fatalf("a subscription without rules got a message: %+v, %v", rp, err)
	}
	if _, err := c.DeleteRule(f.ctx, "t", "s", "orders", nil); statusOfErr(err) != http.StatusNotFound {
		t.Fatalf("deleting a missing rule: %v, want 404", err)
	}
}

// TestSDKDefaultRule: a subscription created without a rule shows $Default,
// and adding a rule keeps $Default next to it.
func TestSDKDefaultRule(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	f.create(broker.Entity{Path: "t", Kind: broker.KindTopic}, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription})
	r, err := c.GetRule(f.ctx, "t", "s", "$Default", nil)
	if err != nil || r == nil || r.Name != "$Default" || !reflect.DeepEqual(r.Filter, &sbadmin.TrueFilter{}) {
		t.Fatalf("GetRule($Default): %v %v", r, err)
	}
	created := f.clock.Now().UTC()
	f.clock.Advance(time.Second)
	if _, err := c.CreateRule(f.ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("red"), Filter: &sbadmin.CorrelationFilter{Subject: ptr("red")}}); err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	ent, _ := f.eng.Entity(f.ctx, "t/Subscriptions/s")
	// $Default was created with the subscription.
	want := []broker.Rule{{Name: "$Default", CreatedAt: created}, {Name: "red", Filter: &broker.CorrelationFilter{Subject: "red"}, CreatedAt: created.Add(time.Second)}}
	if !reflect.DeepEqual(ent.Rules, want) {
		t.Fatalf("engine rules %s, want %s", dump(ent.Rules), dump(want))
	}
	if _, err := c.DeleteRule(f.ctx, "t", "s", "$Default", nil); err != nil {
		t.Fatalf("DeleteRule($Default): %v", err)
	}
	// Now only red messages arrive.
	if err := f.eng.Send(f.ctx, "t", []*broker.Message{{Subject: "red"}, {Subject: "blue"}}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	rp, err := c.GetSubscriptionRuntimeProperties(f.ctx, "t", "s", nil)
	if err != nil || rp.ActiveMessageCount != 1 {
		t.Fatalf("runtime: %v %+v", err, rp)
	}
}

// TestSDKTransferDeadLetterCount checks TransferDeadLetterMessageCount of a
// queue whose dead-lettered messages cannot be forwarded and of a
// subscription whose messages cannot be forwarded.
func TestSDKTransferDeadLetterCount(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	f.create(
		broker.Entity{Path: "gone"},
		broker.Entity{Path: "work", Settings: broker.EntitySettings{ForwardDeadLetteredMessagesTo: "gone"}},
		broker.Entity{Path: "t", Kind: broker.KindTopic},
		broker.Entity{Path: "t/Subscriptions/fwd", Kind: broker.KindSubscription, Settings: broker.EntitySettings{ForwardTo: "gone"}},
	)
	if err := f.eng.DeleteEntity(f.ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	f.send("work", 2)
	f.settle(broker.DeadLetter, "work", f.receive("work", 1)[0])
	f.send("t", 2)

	rp, err := c.GetQueueRuntimeProperties(f.ctx, "work", nil)
	if err != nil || rp == nil {
		t.Fatalf("GetQueueRuntimeProperties: %v, %v", rp, err)
	}
	ent, _ := f.eng.Entity(f.ctx, "work")
	want := sbadmin.QueueRuntimeProperties{
		SizeInBytes:                    ent.Counts.SizeBytes,
		CreatedAt:                      ent.CreatedAt,
		UpdatedAt:                      ent.UpdatedAt,
		AccessedAt:                     ent.AccessedAt,
		TotalMessageCount:              2,
		ActiveMessageCount:             1,
		TransferDeadLetterMessageCount: 1,
	}
	if rp.QueueRuntimeProperties != want {
		t.Fatalf("work:\n got %+v\nwant %+v", rp.QueueRuntimeProperties, want)
	}
	srp, err := c.GetSubscriptionRuntimeProperties(f.ctx, "t", "fwd", nil)
	if err != nil || srp == nil {
		t.Fatalf("GetSubscriptionRuntimeProperties: %v, %v", srp, err)
	}
	sub, _ := f.eng.Entity(f.ctx, "t/Subscriptions/fwd")
	wantSub := sbadmin.SubscriptionRuntimeProperties{
		CreatedAt:                      sub.CreatedAt,
		UpdatedAt:                      sub.UpdatedAt,
		AccessedAt:                     sub.AccessedAt,
		TotalMessageCount:              2,
		TransferDeadLetterMessageCount: 2,
	}
	if srp.SubscriptionRuntimeProperties != wantSub {
		t.Fatalf("fwd:\n got %+v\nwant %+v", srp.SubscriptionRuntimeProperties, wantSub)
	}
}
