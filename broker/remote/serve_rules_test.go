package remote

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
)

// plainHTTP sends the SDK admin client's https:// requests to a test
// server over plain HTTP.
type plainHTTP struct{ host string }

func (p plainHTTP) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = "http", p.host, ""
	return http.DefaultTransport.RoundTrip(req)
}

// sdkAdmin returns the official SDK's admin client for the environment's
// admin API.
func (e *serveEnv) sdkAdmin() *sbadmin.Client {
	e.t.Helper()
	u, err := url.Parse(e.adminURL)
	if err != nil {
		e.t.Fatal(err)
	}
	cs := "Endpoint=sb://" + u.Host + ";SharedAccessKeyName=" + sas.DefaultKeyName + ";SharedAccessKey=" + sas.DefaultKey + ";UseDevelopmentEmulator=true"
	ac, err := sbadmin.NewClientFromConnectionString(cs, &sbadmin.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: plainHTTP{u.Host}, Timeout: 30 * time.Second},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		e.t.Fatal(err)
	}
	return ac
}

// SubscriptionRules reads the rules the official SDK's admin client created,
// every filter kind and the SQL action, with the $Default rule the
// subscription started with, from our own admin API.
func TestServeSubscriptionRules(t *testing.T) {
	env := newServe(t, nil)
	ctx := context.Background()
	ac := env.sdkAdmin()
	if _, err := ac.CreateTopic(ctx, "events", nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"audit", "routed"} {
		if _, err := ac.CreateSubscription(ctx, "events", s, nil); err != nil {
			t.Fatal(err)
		}
	}
	ptr := func(s string) *string { return &s }
	for _, o := range []sbadmin.CreateRuleOptions{
		{Name: ptr("red"), Filter: &sbadmin.SQLFilter{Expression: "color = 'red' AND quantity > 5"},
			Action: &sbadmin.SQLAction{Expression: "SET priority = 'high'"}},
		{Name: ptr("billing"), Filter: &sbadmin.CorrelationFilter{CorrelationID: ptr("cart-7"), Subject: ptr("OrderPlaced"),
			ApplicationProperties: map[string]any{"tenant": "acme", "tier": int64(2), "vip": true}}},
		{Name: ptr("never"), Filter: &sbadmin.FalseFilter{}},
		{Name: ptr("param"), Filter: &sbadmin.SQLFilter{Expression: "quantity > @min", Parameters: map[string]any{"@min": 5}},
			Action: &sbadmin.SQLAction{Expression: "SET tier = @tier", Parameters: map[string]any{"@tier": "gold"}}},
	} {
		if _, err := ac.CreateRule(ctx, "events", "routed", &o); err != nil {
			t.Fatalf("CreateRule %s: %v", *o.Name, err)
		}
	}
	if _, err := ac.DeleteRule(ctx, "events", "routed", "$Default", nil); err != nil {
		t.Fatalf("DeleteRule $Default: %v", err)
	}

	c := env.dial(env.config(""))
	rr, ok := broker.RulesOf(c)
	if !ok {
		t.Fatal("the remote client has no RuleReader")
	}
	// Entities does not read rules: that is one request per subscription.
	ents, err := c.Entities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if len(e.Rules) != 0 {
			t.Fatalf("Entities read the rules of %s: %+v", e.Path, e.Rules)
		}
	}

	got, err := rr.SubscriptionRules(ctx, "events/Subscriptions/audit")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "$Default" || got[0].Filter != nil || got[0].SQL != "" || got[0].Action != "" || got[0].CreatedAt.IsZero() {
		t.Fatalf("audit rules = %+v, want the $Default TrueFilter", got)
	}

	got, err = rr.SubscriptionRules(ctx, "events/Subscriptions/routed")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i].CreatedAt.IsZero() {
			t.Errorf("rule %s has no CreatedAt", got[i].Name)
		}
		got[i].CreatedAt = time.Time{}
	}
	want := map[string]broker.Rule{
		"red": {Name: "red", SQL: "color = 'red' AND quantity > 5", Action: "SET priority = 'high'"},
		"billing": {Name: "billing", Filter: &broker.CorrelationFilter{CorrelationID: "cart-7", Subject: "OrderPlaced",
			Properties: map[string]any{"tenant": "acme", "tier": int32(2), "vip": true}}},
		"never": {Name: "never", SQL: "1=0"},
		"param": {Name: "param", SQL: "quantity > @min", Parameters: map[string]any{"@min": int32(5)},
			Action: "SET tier = @tier", ActionParameters: map[string]any{"@tier": "gold"}},
	}
	if len(got) != len(want) {
		t.Fatalf("routed rules = %+v, want %d", got, len(want))
	}
	for _, r := range got {
		if !reflect.DeepEqual(r, want[r.Name]) {
			t.Errorf("rule %s = %+v (filter %+v), want %+v (filter %+v)", r.Name, r, r.Filter, want[r.Name], want[r.Name].Filter)
		}
	}

	_, err = rr.SubscriptionRules(ctx, "events/Subscriptions/missing")
	if !errors.Is(err, broker.ErrNotFound) && broker.CodeOf(err) != broker.CodeNotFound {
		t.Fatalf("rules of a missing subscription: %v, want not found", err)
	}
}

// An admin API that refuses, and an endpoint without one, fail with a
// clear error instead of rules.
func TestSubscriptionRulesRefusedOrNoAdmin(t *testing.T) {
	env := newServe(t, nil)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<Error><Code>403</Code><Detail>Manage claim is required. TrackingId:abc-1</Detail></Error>`))
	}))
	t.Cleanup(refusing.Close)
	cfg := env.config("")
	cfg.AdminURL = refusing.URL
	c := env.dial(cfg)
	_, err := c.SubscriptionRules(context.Background(), "events/Subscriptions/audit")
	var be *broker.Error
	if !errors.As(err, &be) || be.Code != broker.CodeUnauthorized || !strings.Contains(be.Message, "403 Manage claim is required") {
		t.Fatalf("refused: %v, want unauthorized with the admin API's text", err)
	}

	generic := &Client{} // no admin API: a generic AMQP 1.0 endpoint
	_, err = generic.SubscriptionRules(context.Background(), "events/Subscriptions/audit")
	if !errors.As(err, &be) || be.Code != broker.CodeNotSupported ||
		be.Message != "subscription rules cannot be read: this endpoint has no Service Bus admin API (generic AMQP 1.0)" {
		t.Fatalf("no admin API: %v", err)
	}
	if _, err := c.SubscriptionRules(context.Background(), "orders"); broker.CodeOf(err) != broker.CodeInvalid {
		t.Fatalf("a queue path: %v, want invalid", err)
	}
}
