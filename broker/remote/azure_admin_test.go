package remote

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
)

// azureDoc returns a document of broker/atom/testdata/azure, written by
// hand in the shape Azure Service Bus answers with.
func azureDoc(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "atom", "testdata", "azure", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// azureAdmin answers the admin API requests of the remote client with the
// Azure-shaped documents; paths maps a request path to a status and body.
func azureAdmin(t *testing.T, paths map[string]func() (int, []byte)) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer, ok := paths[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write(azureDoc(t, "error.xml"))
			return
		}
		status, body := answer()
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func ok(b []byte) func() (int, []byte) { return func() (int, []byte) { return http.StatusOK, b } }

// queuesFeed wraps the queue entry in a feed, as $Resources/Queues lists
// it.
func queuesFeed(entry []byte) []byte {
	entry = bytes.TrimPrefix(entry, []byte(`<?xml version="1.0" encoding="utf-8"?>`))
	return []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><title type="text">Queues</title>` + string(entry) + `</feed>`)
}

// TestRemoteReadsAzureDocuments: the remote client reads entities, their
// settings and counts, and rules from answers in Azure's shape.
func TestRemoteReadsAzureDocuments(t *testing.T) {
	env := newServe(t, nil)
	cfg := env.config("")
	cfg.AdminURL = azureAdmin(t, map[string]func() (int, []byte){
		"/$Resources/Queues":                  ok(queuesFeed(azureDoc(t, "queue.xml"))),
		"/$Resources/Topics":                  ok(azureDoc(t, "topics-feed.xml")),
		"/events/Subscriptions":               ok(azureDoc(t, "subscriptions-feed.xml")),
		"/events/Subscriptions/billing/Rules": ok(azureDoc(t, "rules-feed.xml")),
	})
	c := env.dial(cfg)
	ctx := context.Background()
	ents, err := c.Entities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]broker.Entity{}
	for _, e := range ents {
		got[e.Path] = e
	}
	if len(ents) != 4 {
		t.Fatalf("entities %+v", ents)
	}
	q := got["orders"]
	wantQ := broker.EntitySettings{LockDuration: 45 * time.Second, MaxDeliveryCount: 7, DefaultMessageTimeToLive: 14 * 24 * time.Hour,
		DeadLetteringOnMessageExpiration: true, RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: 10 * time.Minute,
		ForwardTo: "archive", ForwardToURI: "sb://contoso.servicebus.windows.net/archive",
		ForwardDeadLetteredMessagesTo: "poison", ForwardDeadLetteredMessagesToURI: "sb://contoso.servicebus.windows.net/poison",
		MaxSizeInMegabytes: 81920, MaxMessageSizeInKilobytes: 256, AutoDeleteOnIdle: broker.MaxTimeToLive, EnablePartitioning: true,
		DisableBatchedOperations: true, Status: broker.StatusReceiveDisabled}
	if q.Kind != broker.KindQueue || q.Settings != wantQ || q.UserMetadata != `owner: payments & "ledger"` ||
		q.Counts != (broker.Counts{Active: 5, Deferred: 1, Scheduled: 1, DeadLettered: 2, SizeBytes: 2048}) ||
		!q.CreatedAt.Equal(time.Date(2024, 2, 3, 19, 34, 5, 498303900, time.UTC)) ||
		len(q.AuthorizationRules) != 1 || q.AuthorizationRules[0].Rights != broker.RightListen|broker.RightSend ||
		q.AuthorizationRules[0].KeyName != "orders-app" {
		t.Errorf("queue %+v\nsettings %+v", q, q.Settings)
	}
	if tp := got["events"]; tp.Kind != broker.KindTopic || tp.Settings.AutoDeleteOnIdle != time.Hour || tp.Counts.SizeBytes != 1536 ||
		tp.UserMetadata != "fan-out of order events" || tp.Settings.DefaultMessageTimeToLive != broker.MaxTimeToLive {
		t.Errorf("topic %+v", tp)
	}
	if s := got["events/Subscriptions/audit"]; s.Kind != broker.KindSubscription || s.Settings.LockDuration != time.Minute ||
		s.Counts != (broker.Counts{Active: 3, Deferred: 2, DeadLettered: 1}) {
		t.Errorf("audit %+v", s)
	}
	if s := got["events/Subscriptions/billing"]; !s.Settings.RequiresSession || s.Settings.Status != broker.StatusSendDisabled ||
		s.Settings.ForwardTo != "invoices" || s.Settings.ForwardDeadLetteredMessagesTo != "billing-poison" ||
		s.Settings.MaxDeliveryCount != 5 || !s.Settings.DisableBatchedOperations || !s.AccessedAt.IsZero() {
		t.Errorf("billing %+v", s)
	}

	rules, err := c.SubscriptionRules(ctx, "events/Subscriptions/billing")
	if err != nil {
		t.Fatal(err)
	}
	for i := range rules {
		rules[i].CreatedAt = time.Time{}
	}
	want := []broker.Rule{
		{Name: "$Default"},
		{Name: "big-orders", SQL: "quantity > @min AND region = 'west'", Parameters: map[string]any{"@min": int32(100)},
			Action: "SET priority = @p; SET reviewed = false", ActionParameters: map[string]any{"@p": "high"}},
		{Name: "cart", Filter: &broker.CorrelationFilter{CorrelationID: "cart-7", Subject: "OrderPlaced", ContentType: "application/json",
			Properties: map[string]any{"tenant": "acme", "tier": int32(2), "vip": true}}},
		{Name: "paused", SQL: "1=0"},
	}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("rules %+v\nwant %+v", rules, want)
	}

	_, err = c.SubscriptionRules(ctx, "events/Subscriptions/missing")
	var be *broker.Error
	if !errors.As(err, &be) || be.Code != broker.CodeNotFound || !strings.HasPrefix(be.TrackingID, "0a4bc4d4-8c1e-4f1e-9f5e-6d0d3c8e2a11") {
		t.Errorf("missing subscription: %v (%+v)", err, be)
	}
}

// TestRemoteMalformedDuration: a malformed duration in an answer fails
// the listing with an error naming the element, instead of reading as
// zero; an overlong one is "never".
func TestRemoteMalformedDuration(t *testing.T) {
	env := newServe(t, nil)
	feed := string(queuesFeed(azureDoc(t, "queue.xml")))
	bad := strings.Replace(feed, "<LockDuration>PT45S</LockDuration>", "<LockDuration>45 seconds</LockDuration>", 1)
	long := strings.Replace(feed, "<LockDuration>PT45S</LockDuration>", "<LockDuration>P99999999D</LockDuration>", 1)
	answer := []byte(bad)
	cfg := env.config("")
	cfg.AdminURL = azureAdmin(t, map[string]func() (int, []byte){
		"/$Resources/Queues": func() (int, []byte) { return http.StatusOK, answer },
		"/$Resources/Topics": ok([]byte(`<feed xmlns="http://www.w3.org/2005/Atom"/>`)),
	})
	c := env.dial(cfg)
	_, err := c.Entities(context.Background())
	var de *atom.DurationError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), `QueueDescription.LockDuration: "45 seconds" is not an ISO 8601 duration`) {
		t.Fatalf("malformed duration: %v", err)
	}
	answer = []byte(long)
	c = env.dial(cfg) // a new client: a failed listing is remembered for a while
	ents, err := c.Entities(context.Background())
	if err != nil || len(ents) != 1 || ents[0].Settings.LockDuration != broker.MaxTimeToLive {
		t.Fatalf("overlong duration: %+v, %v", ents, err)
	}
}
