package admin

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/peeklock/peeklock/broker"
)

// TestSDKQueueLifecycle drives create, get, update, list and delete of a
// queue with the official admin client and checks the engine's view.
func TestSDKQueueLifecycle(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	f.create(broker.Entity{Path: "target"})

	created, err := c.CreateQueue(f.ctx, "orders", &sbadmin.CreateQueueOptions{Properties: &sbadmin.QueueProperties{
		LockDuration:                        ptr("PT45S"),
		MaxSizeInMegabytes:                  ptr(int32(2048)),
		RequiresDuplicateDetection:          ptr(true),
		RequiresSession:                     ptr(true),
		DefaultMessageTimeToLive:            ptr("P2D"),
		DeadLetteringOnMessageExpiration:    ptr(true),
		DuplicateDetectionHistoryTimeWindow: ptr("PT20M"),
		MaxDeliveryCount:                    ptr(int32(7)),
		ForwardDeadLetteredMessagesTo:       ptr("sb://" + f.host + "/target"),
		MaxMessageSizeInKilobytes:           ptr(int64(1024)),
	}})
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	if created.QueueName != "orders" || *created.LockDuration != "PT45S" || *created.MaxDeliveryCount != 7 {
		t.Fatalf("CreateQueue answered %+v", created)
	}
	ent, err := f.eng.Entity(f.ctx, "orders")
	if err != nil {
		t.Fatalf("engine Entity: %v", err)
	}
	want := broker.EntitySettings{
		LockDuration:                        45 * time.Second,
		MaxDeliveryCount:                    7,
		DefaultMessageTimeToLive:            48 * time.Hour,
		DeadLetteringOnMessageExpiration:    true,
		RequiresDuplicateDetection:          true,
		DuplicateDetectionHistoryTimeWindow: 20 * time.Minute,
		RequiresSession:                     true,
		ForwardDeadLetteredMessagesTo:       "target",
		ForwardDeadLetteredMessagesToURI:    "sb://" + f.host + "/target",
		MaxSizeInMegabytes:                  2048,
		MaxMessageSizeInKilobytes:           1024,
		AutoDeleteOnIdle:                    broker.MaxTimeToLive,
	}
	if ent.Kind != broker.KindQueue || ent.Settings != want {
		t.Fatalf("engine settings:\n got %+v\nwant %+v", ent.Settings, want)
	}

	got, err := c.GetQueue(f.ctx, "orders", nil)
	if err != nil || got == nil {
		t.Fatalf("GetQueue: %v, %v", got, err)
	}
	wantProps := sbadmin.QueueProperties{
		LockDuration:                        ptr("PT45S"),
		MaxSizeInMegabytes:                  ptr(int32(2048)),
		RequiresDuplicateDetection:          ptr(true),
		RequiresSession:                     ptr(true),
		DefaultMessageTimeToLive:            ptr("P2D"),
		DeadLetteringOnMessageExpiration:    ptr(true),
		DuplicateDetectionHistoryTimeWindow: ptr("PT20M"),
		MaxDeliveryCount:                    ptr(int32(7)),
		EnableBatchedOperations:             ptr(true),
		Status:                              ptr(sbadmin.EntityStatusActive),
		AutoDeleteOnIdle:                    ptr("P10675199DT2H48M5.4775807S"),
		EnablePartitioning:                  ptr(false),
		ForwardDeadLetteredMessagesTo:       ptr("sb://" + f.host + "/target"),
		MaxMessageSizeInKilobytes:           ptr(int64(1024)),
	}
	if got.QueueName != "orders" || !reflect.DeepEqual(got.QueueProperties, wantProps) {
		t.Fatalf("GetQueue:\n got %s\nwant %s", dump(got.QueueProperties), dump(wantProps))
	}

	// Update what GetQueue returned, as the SDK's docs suggest.
	props := got.QueueProperties
	props.MaxDeliveryCount = ptr(int32(3))
	props.LockDuration = ptr("PT1M")
	props.ForwardDeadLetteredMessagesTo = nil
	updated, err := c.UpdateQueue(f.ctx, "orders", props, nil)
	if err != nil {
		t.Fatalf("UpdateQueue: %v", err)
	}
	if *updated.MaxDeliveryCount != 3 || *updated.LockDuration != "PT1M" || updated.ForwardDeadLetteredMessagesTo != nil {
		t.Fatalf("UpdateQueue answered %s", dump(updated.QueueProperties))
	}
	ent, _ = f.eng.Entity(f.ctx, "orders")
	if ent.Settings.MaxDeliveryCount != 3 || ent.Settings.LockDuration != time.Minute || ent.Settings.ForwardDeadLetteredMessagesTo != "" || !ent.Settings.RequiresSession {
		t.Fatalf("engine settings after update: %+v", ent.Settings)
	}

	if _, err := c.DeleteQueue(f.ctx, "orders", nil); err != nil {
		t.Fatalf("DeleteQueue: %v", err)
	}
	if _, err := f.eng.Entity(f.ctx, "orders"); !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("engine still has the queue: %v", err)
	}
}

// TestSDKQueueDefaults creates a queue without properties: the engine's
// defaults come back.
func TestSDKQueueDefaults(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	if _, err := c.CreateQueue(f.ctx, "plain", nil); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	got, err := c.GetQueue(f.ctx, "plain", nil)
	if err != nil || got == nil {
		t.Fatalf("GetQueue: %v, %v", got, err)
	}
	if *got.LockDuration != "PT1M" || *got.MaxDeliveryCount != 10 || *got.DefaultMessageTimeToLive != "P10675199DT2H48M5.4775807S" ||
		*got.DuplicateDetectionHistoryTimeWindow != "PT10M" || *got.MaxSizeInMegabytes != 1024 || *got.MaxMessageSizeInKilobytes != 256 ||
		*got.RequiresSession || got.ForwardTo != nil {
		t.Fatalf("defaults: %s", dump(got.QueueProperties))
	}
}

func TestSDKErrors(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	if _, err := c.CreateQueue(f.ctx, "dup", nil); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	_, err := c.CreateQueue(f.ctx, "dup", nil)
	if statusOfErr(err) != http.StatusConflict {
		t.Fatalf("second CreateQueue: %v, want 409", err)
	}
	_, err = c.CreateTopic(f.ctx, "dup", nil)
	if statusOfErr(err) != http.StatusConflict {
		t.Fatalf("CreateTopic over a queue: %v, want 409", err)
	}
	// The SDK maps 404 on Get to a nil answer without error.
	q, err := c.GetQueue(f.ctx, "missing", nil)
	if q != nil || err != nil {
		t.Fatalf("GetQueue(missing) = %v, %v; want nil, nil", q, err)
	}
	rp, err := c.GetQueueRuntimeProperties(f.ctx, "missing", nil)
	if rp != nil || err != nil {
		t.Fatalf("GetQueueRuntimeProperties(missing) = %v, %v; want nil, nil", rp, err)
	}
	sub, err := c.GetSubscription(f.ctx, "nope", "s", nil)
	if sub != nil || err != nil {
		t.Fatalf("GetSubscription(missing) = %v, %v; want nil, nil", sub, err)
	}
	if _, err := c.DeleteQueue(f.ctx, "missing", nil); statusOfErr(err) != http.StatusNotFound {
		t.Fatalf("DeleteQueue(missing): %v, want 404", err)
	}
	if _, err := c.UpdateQueue(f.ctx, "missing", sbadmin.QueueProperties{}, nil); statusOfErr(err) != http.StatusNotFound {
		t.Fatalf("UpdateQueue(missing): %v, want 404", err)
	}
	if _, err := c.CreateSubscription(f.ctx, "no-topic", "s", nil); statusOfErr(err) != http.StatusNotFound {
		t.Fatalf("CreateSubscription on a missing topic: %v, want 404", err)
	}
	_, err = c.CreateQueue(f.ctx, "bad", &sbadmin.CreateQueueOptions{Properties: &sbadmin.QueueProperties{LockDuration: ptr("PT10M")}})
	if statusOfErr(err) != http.StatusBadRequest {
		t.Fatalf("CreateQueue with a 10 minute lock: %v, want 400", err)
	}
	_, err = c.CreateQueue(f.ctx, "bad", &sbadmin.CreateQueueOptions{Properties: &sbadmin.QueueProperties{RequiresSession: ptr(false)}})
	if err != nil {
		t.Fatalf("CreateQueue bad: %v", err)
	}
	// Immutable properties are refused in Service Bus's words, which the
	// SDK's own admin tests check.
	_, err = c.UpdateQueue(f.ctx, "bad", sbadmin.QueueProperties{RequiresSession: ptr(true)}, nil)
	if statusOfErr(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "The value for the RequiresSession property of an existing Queue cannot be changed") {
		t.Fatalf("UpdateQueue changing RequiresSession: %v, want 400", err)
	}
	if _, err := c.CreateTopic(f.ctx, "top", nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.UpdateTopic(f.ctx, "top", sbadmin.TopicProperties{EnablePartitioning: ptr(true)}, nil)
	if statusOfErr(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "Partitioning cannot be changed for Topic. ") {
		t.Fatalf("UpdateTopic changing EnablePartitioning: %v, want 400", err)
	}
}

func TestSDKWrongKey(t *testing.T) {
	f := newFixture(t)
	f.create(broker.Entity{Path: "q"})
	c := f.client("not-the-key")
	_, err := c.GetQueue(f.ctx, "q", nil)
	if statusOfErr(err) != http.StatusUnauthorized {
		t.Fatalf("GetQueue with a wrong key: %v, want 401", err)
	}
	_, err = c.CreateQueue(f.ctx, "q2", nil)
	if statusOfErr(err) != http.StatusUnauthorized {
		t.Fatalf("CreateQueue with a wrong key: %v, want 401", err)
	}
	pager := c.NewListQueuesPager(nil)
	_, err = pager.NextPage(f.ctx)
	if statusOfErr(err) != http.StatusUnauthorized {
		t.Fatalf("ListQueues with a wrong key: %v, want 401", err)
	}
	if _, err := f.eng.Entity(f.ctx, "q2"); !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("the refused create made a queue: %v", err)
	}
}

// TestSDKExpiredToken moves the server's clock past the SDK's two-hour
// token lifetime.
func TestSDKExpiredToken(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	if _, err := c.CreateQueue(f.ctx, "q", nil); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	f.clock.Advance(3 * time.Hour)
	_, err := c.GetQueue(f.ctx, "q", nil)
	if statusOfErr(err) != http.StatusUnauthorized || !strings.Contains(err.Error(), "ExpiredToken: The token is expired. Expiration time: ") {
		t.Fatalf("GetQueue with an expired token: %v, want 401", err)
	}
}

func TestSDKListQueuesPaging(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	names := []string{"q-e", "q-a", "q-d", "q-b", "q-c"}
	for _, n := range names {
		if _, err := c.CreateQueue(f.ctx, n, nil); err != nil {
			t.Fatalf("CreateQueue %s: %v", n, err)
		}
	}
	f.create(broker.Entity{Path: "t", Kind: broker.KindTopic}) // not listed as a queue
	var pages [][]string
	pager := c.NewListQueuesPager(&sbadmin.ListQueuesOptions{MaxPageSize: 2})
	for pager.More() {
		p, err := pager.NextPage(f.ctx)
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		var page []string
		for _, q := range p.Queues {
			page = append(page, q.QueueName)
		}
		if page != nil {
			pages = append(pages, page)
		}
	}
	want := [][]string{{"q-a", "q-b"}, {"q-c", "q-d"}, {"q-e"}}
	if !reflect.DeepEqual(pages, want) {
		t.Fatalf("pages = %v, want %v", pages, want)
	}

	// Without a page size, one page of everything.
	all := c.NewListQueuesRuntimePropertiesPager(nil)
	var n int
	for all.More() {
		p, err := all.NextPage(f.ctx)
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		n += len(p.QueueRuntimeProperties)
	}
	if n != 5 {
		t.Fatalf("runtime properties of %d queues, want 5", n)
	}
}

// TestSDKQueueRuntimeProperties checks the counts against messages sent,
// locked, deferred, scheduled and dead-lettered through the engine.
func TestSDKQueueRuntimeProperties(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	created := f.clock.Now().UTC()
	f.create(broker.Entity{Path: "work"})
	f.clock.Advance(1500 * time.Millisecond)
	f.send("work", 5)
	f.clock.Advance(time.Second)
	locked := f.receive("work", 3)
	f.settle(broker.DeadLetter, "work", locked[0])
	f.settle(broker.Defer, "work", locked[1])
	// locked[2] stays locked.
	if _, err := f.eng.Schedule(f.ctx, "work", f.clock.Now().Add(time.Hour), []*broker.Message{{MessageID: "later"}}); err != nil {
		t.Fatalf("Schedule: %v", err)
	}
	ent, _ := f.eng.Entity(f.ctx, "work")
	wantCounts := broker.Counts{Active: 2, Locked: 1, Deferred: 1, Scheduled: 1, DeadLettered: 1, SizeBytes: ent.Counts.SizeBytes}
	if ent.Counts != wantCounts || ent.Counts.SizeBytes <= 0 {
		t.Fatalf("engine counts %+v, want %+v", ent.Counts, wantCounts)
	}

	rp, err := c.GetQueueRuntimeProperties(f.ctx, "work", nil)
	if err != nil || rp == nil {
		t.Fatalf("GetQueueRuntimeProperties: %v, %v", rp, err)
	}
	want := sbadmin.QueueRuntimeProperties{
		SizeInBytes:            ent.Counts.SizeBytes,
		CreatedAt:              created,
		UpdatedAt:              created,
		AccessedAt:             created.Add(2 * time.Second), // the receive and the schedule at 2.5 s, to the second
		TotalMessageCount:      6,
		ActiveMessageCount:     3, // 2 available + 1 locked
		DeadLetterMessageCount: 1,
		ScheduledMessageCount:  1,
	}
	if rp.QueueName != "work" || rp.QueueRuntimeProperties != want {
		t.Fatalf("runtime properties:\n got %+v\nwant %+v", rp.QueueRuntimeProperties, want)
	}

	// The scheduled message becomes active an hour later.
	f.clock.Advance(time.Hour)
	rp, err = c.GetQueueRuntimeProperties(f.ctx, "work", nil)
	if err != nil {
		t.Fatalf("GetQueueRuntimeProperties: %v", err)
	}
	if rp.ActiveMessageCount != 4 || rp.ScheduledMessageCount != 0 || rp.TotalMessageCount != 6 || !rp.AccessedAt.Equal(want.AccessedAt) {
		t.Fatalf("after activation: %+v", rp.QueueRuntimeProperties)
	}
}
