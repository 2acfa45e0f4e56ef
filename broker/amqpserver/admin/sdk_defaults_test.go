package admin

import (
	"testing"

	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

// A topic's SupportOrdering and a subscription's
// DeadLetteringOnFilterEvaluationExceptions default to true, as on Service
// Bus, and keep what a create or an update gives them.
func TestSDKOrderingAndFilterExceptionSettings(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	plain, err := c.CreateTopic(f.ctx, "plain", nil)
	if err != nil || plain.SupportOrdering == nil || !*plain.SupportOrdering {
		t.Fatalf("CreateTopic without options: %v %s; want SupportOrdering true", err, dump(plain))
	}
	unordered, err := c.CreateTopic(f.ctx, "unordered", &sbadmin.CreateTopicOptions{Properties: &sbadmin.TopicProperties{SupportOrdering: ptr(false)}})
	if err != nil || *unordered.SupportOrdering {
		t.Fatalf("CreateTopic with SupportOrdering false: %v %s", err, dump(unordered))
	}
	got, err := c.GetTopic(f.ctx, "unordered", nil)
	if err != nil || *got.SupportOrdering {
		t.Fatalf("GetTopic: %v %s; want SupportOrdering false", err, dump(got))
	}
	got.SupportOrdering = ptr(true)
	if up, err := c.UpdateTopic(f.ctx, "unordered", got.TopicProperties, nil); err != nil || !*up.SupportOrdering {
		t.Fatalf("UpdateTopic to SupportOrdering true: %v %s", err, dump(up))
	}

	sub, err := c.CreateSubscription(f.ctx, "plain", "s", nil)
	if err != nil || sub.EnableDeadLetteringOnFilterEvaluationExceptions == nil || !*sub.EnableDeadLetteringOnFilterEvaluationExceptions {
		t.Fatalf("CreateSubscription without options: %v %s; want DeadLetteringOnFilterEvaluationExceptions true", err, dump(sub))
	}
	sub.EnableDeadLetteringOnFilterEvaluationExceptions = ptr(false)
	if up, err := c.UpdateSubscription(f.ctx, "plain", "s", sub.SubscriptionProperties, nil); err != nil || *up.EnableDeadLetteringOnFilterEvaluationExceptions {
		t.Fatalf("UpdateSubscription to false: %v %s", err, dump(up))
	}
	if again, err := c.GetSubscription(f.ctx, "plain", "s", nil); err != nil || *again.EnableDeadLetteringOnFilterEvaluationExceptions {
		t.Fatalf("GetSubscription after the update: %v %s; want false", err, dump(again))
	}
}
