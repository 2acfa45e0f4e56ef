package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

// TestSDKKeyWithoutManage: a key without Manage is refused every admin
// operation with 401 in Service Bus's words for each kind of resource,
// while a missing queue or topic is still "not found" (nil, no error).
func TestSDKKeyWithoutManage(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(NewHandler(eng, Options{
		Keys:      map[string]string{sas.DefaultKeyName: sas.DefaultKey, "NoManage": "nm"},
		KeyRights: map[string]sas.Rights{"NoManage": sas.Send | sas.Listen},
	}))
	t.Cleanup(func() { srv.Close(); _ = eng.Close() })
	u, _ := url.Parse(srv.URL)
	ctx := context.Background()
	for _, e := range []broker.Entity{{Path: "q", Kind: broker.KindQueue}, {Path: "t", Kind: broker.KindTopic},
		{Path: "t/Subscriptions/s", Kind: broker.KindSubscription}} {
		if err := eng.CreateEntity(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	c, err := sbadmin.NewClientFromConnectionString("Endpoint=sb://"+u.Host+";SharedAccessKeyName=NoManage;SharedAccessKey=nm;UseDevelopmentEmulator=true",
		&sbadmin.ClientOptions{ClientOptions: azcore.ClientOptions{
			Transport: trusting(srv),
			Retry:     policy.RetryOptions{MaxRetries: -1},
		}})
	if err != nil {
		t.Fatal(err)
	}
	want := func(what string, err error, text string) {
		t.Helper()
		if statusOfErr(err) != http.StatusUnauthorized || !strings.Contains(err.Error(), text) {
			t.Fatalf("%s: %v; want 401 with %q", what, err, text)
		}
	}
	if q, err := c.GetQueue(ctx, "missing", nil); err != nil || q != nil {
		t.Fatalf("GetQueue of a missing queue = %v, %v; want nil, nil", q, err)
	}
	_, err = c.GetQueue(ctx, "q", nil)
	want("GetQueue", err, ">Manage,EntityRead claims required for this operation")
	_, err = c.NewListTopicsPager(nil).NextPage(ctx)
	want("ListTopics", err, "Manage,EntityRead claims required for this operation")
	_, err = c.CreateQueue(ctx, "new", nil)
	want("CreateQueue", err, "Authorization failed for specified action: Manage,EntityWrite")
	_, err = c.DeleteTopic(ctx, "t", nil)
	want("DeleteTopic", err, "Authorization failed for specified action: Manage,EntityDelete.")
	_, err = c.GetSubscription(ctx, "t", "missing", nil)
	want("GetSubscription", err, "401 SubCode=40100: Unauthorized : Unauthorized access for 'GetSubscription'")
	_, err = c.NewListSubscriptionsPager("t", nil).NextPage(ctx)
	want("ListSubscriptions", err, "Unauthorized access for 'EnumerateSubscriptions' operation")
	_, err = c.CreateSubscription(ctx, "t", "new", nil)
	want("CreateSubscription", err, "Unauthorized access for 'CreateOrUpdateSubscription'")
	_, err = c.DeleteSubscription(ctx, "t", "s", nil)
	want("DeleteSubscription", err, "Unauthorized access for 'DeleteSubscription'")
	if _, err := eng.Entity(ctx, "t/Subscriptions/s"); err != nil {
		t.Fatalf("the subscription must still be there: %v", err)
	}
}
