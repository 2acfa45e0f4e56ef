package admin

import (
	"net/http"
	"strings"
	"testing"
	"time"

	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/peeklock/peeklock/broker"
)

// TestSDKQueueUserMetadataAndTimes: UserMetadata is set on create, replaced
// and cleared by updates (a PUT replaces the whole description), and each
// update moves UpdatedAt.
func TestSDKQueueUserMetadataAndTimes(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	created := f.clock.Now().UTC()
	cr, err := c.CreateQueue(f.ctx, "q", &sbadmin.CreateQueueOptions{Properties: &sbadmin.QueueProperties{UserMetadata: ptr("owner: payments")}})
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	if cr.UserMetadata == nil || *cr.UserMetadata != "owner: payments" {
		t.Fatalf("CreateQueue answered UserMetadata %v", cr.UserMetadata)
	}
	if ent, _ := f.eng.Entity(f.ctx, "q"); ent.UserMetadata != "owner: payments" || !ent.CreatedAt.Equal(created) {
		t.Fatalf("engine: UserMetadata %q, CreatedAt %v", ent.UserMetadata, ent.CreatedAt)
	}

	f.clock.Advance(2*time.Second + 250*time.Millisecond)
	got, err := c.GetQueue(f.ctx, "q", nil)
	if err != nil || got.UserMetadata == nil || *got.UserMetadata != "owner: payments" {
		t.Fatalf("GetQueue: %v %s", err, dump(got))
	}
	props := got.QueueProperties
	props.UserMetadata = ptr("owner: ledger")
	up, err := c.UpdateQueue(f.ctx, "q", props, nil)
	if err != nil || up.UserMetadata == nil || *up.UserMetadata != "owner: ledger" {
		t.Fatalf("UpdateQueue: %v %s", err, dump(up))
	}
	updated := created.Add(2*time.Second + 250*time.Millisecond)
	rp, err := c.GetQueueRuntimeProperties(f.ctx, "q", nil)
	if err != nil {
		t.Fatalf("GetQueueRuntimeProperties: %v", err)
	}
	if !rp.CreatedAt.Equal(created) || !rp.UpdatedAt.Equal(updated) || !rp.AccessedAt.IsZero() {
		t.Fatalf("times: created %v, updated %v, accessed %v; want %v, %v, zero", rp.CreatedAt, rp.UpdatedAt, rp.AccessedAt, created, updated)
	}

	props.UserMetadata = nil
	if _, err := c.UpdateQueue(f.ctx, "q", props, nil); err != nil {
		t.Fatalf("UpdateQueue: %v", err)
	}
	if got, _ := c.GetQueue(f.ctx, "q", nil); got.UserMetadata != nil {
		t.Fatalf("UserMetadata after an update without it: %q", *got.UserMetadata)
	}

	long := strings.Repeat("x", broker.MaxUserMetadataLength+1)
	_, err = c.CreateQueue(f.ctx, "q2", &sbadmin.CreateQueueOptions{Properties: &sbadmin.QueueProperties{UserMetadata: &long}})
	if statusOfErr(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "UserMetadata is 1025 characters long; at most 1024 are allowed") {
		t.Fatalf("CreateQueue with 1025 characters: %v", err)
	}
	props.UserMetadata = &long
	if _, err := c.UpdateQueue(f.ctx, "q", props, nil); statusOfErr(err) != http.StatusBadRequest {
		t.Fatalf("UpdateQueue with 1025 characters: %v", err)
	}
}

func TestSDKTopicAndSubscriptionUserMetadata(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	if _, err := c.CreateTopic(f.ctx, "t", &sbadmin.CreateTopicOptions{Properties: &sbadmin.TopicProperties{UserMetadata: ptr("topic note")}}); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	if _, err := c.CreateSubscription(f.ctx, "t", "s", &sbadmin.CreateSubscriptionOptions{Properties: &sbadmin.SubscriptionProperties{UserMetadata: ptr("sub note")}}); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	tp, err := c.GetTopic(f.ctx, "t", nil)
	if err != nil || tp.UserMetadata == nil || *tp.UserMetadata != "topic note" {
		t.Fatalf("GetTopic: %v %s", err, dump(tp))
	}
	sp, err := c.GetSubscription(f.ctx, "t", "s", nil)
	if err != nil || sp.UserMetadata == nil || *sp.UserMetadata != "sub note" {
		t.Fatalf("GetSubscription: %v %s", err, dump(sp))
	}
	props := sp.SubscriptionProperties
	props.UserMetadata = ptr("changed")
	if _, err := c.UpdateSubscription(f.ctx, "t", "s", props, nil); err != nil {
		t.Fatalf("UpdateSubscription: %v", err)
	}
	if ent, _ := f.eng.Entity(f.ctx, "t/Subscriptions/s"); ent.UserMetadata != "changed" {
		t.Fatalf("engine UserMetadata %q", ent.UserMetadata)
	}
	// Listings carry it too.
	var topics []sbadmin.TopicItem
	pager := c.NewListTopicsPager(nil)
	for pager.More() {
		p, err := pager.NextPage(f.ctx)
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		topics = append(topics, p.Topics...)
	}
	if len(topics) != 1 || topics[0].UserMetadata == nil || *topics[0].UserMetadata != "topic note" {
		t.Fatalf("ListTopics: %s", dump(topics))
	}
}

// TestRuleAndEntityTimesInXML checks the written times: RFC 3339 in UTC
// with the fractional seconds there are, the implicit $Default rule with
// the subscription's CreatedAt, and AccessedAt as the zero time until the
// first access.
func TestRuleAndEntityTimesInXML(t *testing.T) {
	f := newFixture(t)
	created := f.clock.Now().UTC()
	f.create(broker.Entity{Path: "t", Kind: broker.KindTopic}, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription})
	f.clock.Advance(1250 * time.Millisecond)
	body := `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><RuleDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"><Filter i:type="CorrelationFilter"><Label>x</Label></Filter><Name>x</Name></RuleDescription></content></entry>`
	status, out, _ := f.do("PUT", "/t/Subscriptions/s/Rules/x", "https://"+f.host+"/t/Subscriptions/s/Rules/x", body, nil)
	ruleAt := created.Add(1250*time.Millisecond).Format("2006-01-02T15:04:05") + ".25Z"
	if status != http.StatusCreated || !strings.Contains(out, "<CreatedAt>"+ruleAt+"</CreatedAt><Name>x</Name>") {
		t.Fatalf("PUT rule: %d %s\nwant CreatedAt %s", status, out, ruleAt)
	}
	status, out, _ = f.do("GET", "/t/Subscriptions/s/Rules/$Default", "https://"+f.host+"/t/Subscriptions/s/Rules/$Default", "", nil)
	if want := "<CreatedAt>" + created.Format(time.RFC3339) + "</CreatedAt><Name>$Default</Name>"; status != 200 || !strings.Contains(out, want) {
		t.Fatalf("GET $Default: %d %s\nwant %s", status, out, want)
	}
	status, out, _ = f.do("GET", "/t/Subscriptions/s", "https://"+f.host+"/t/Subscriptions/s", "", nil)
	// A new subscription counts as accessed when it was created, as
	// Service Bus reports it.
	want := "<CreatedAt>" + created.Format(time.RFC3339) + "</CreatedAt><UpdatedAt>" + ruleAt + "</UpdatedAt><AccessedAt>" + created.Format(time.RFC3339) + "</AccessedAt>"
	if status != 200 || !strings.Contains(out, want) || strings.Contains(out, "UserMetadata") {
		t.Fatalf("GET subscription: %d %s\nwant %s and no UserMetadata", status, out, want)
	}
}
