package admin

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

// do sends a raw request to the fixture's server. auth is the audience to
// sign for ("" sends no Authorization header).
func (f *fixture) do(method, path, auth, body string, header map[string]string) (int, string, http.Header) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatalf("NewRequest: %v", err)
	}
	if auth != "" {
		req.Header.Set("Authorization", sas.Sign(auth, sas.DefaultKeyName, sas.DefaultKey, f.clock.Now().Add(time.Hour)))
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

var trackingRE = regexp.MustCompile(`^(.*)\. TrackingId:[0-9a-f-]{36}, SystemTracker:([^,]*), Timestamp:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// checkError checks an error answer: status, XML body with that code, and a
// detail of message, tracking id, tracker and time.
func checkError(t *testing.T, status int, body string, hdr http.Header, wantStatus int, wantMsg, wantTracker string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d; body %s", status, wantStatus, body)
	}
	if ct := hdr.Get("Content-Type"); ct != "application/xml; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	var e atom.Error
	if err := xml.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	if e.Code != wantStatus {
		t.Fatalf("Code %d, want %d", e.Code, wantStatus)
	}
	m := trackingRE.FindStringSubmatch(e.Detail)
	if m == nil {
		t.Fatalf("Detail %q lacks the tracking id, tracker or time", e.Detail)
	}
	if m[1] != wantMsg || m[2] != wantTracker {
		t.Fatalf("Detail:\n got %q (tracker %q)\nwant %q (tracker %q)", m[1], m[2], wantMsg, wantTracker)
	}
}

func TestHealth(t *testing.T) {
	f := newFixture(t)
	status, body, hdr := f.do("GET", "/health", "", "", nil)
	if status != 200 || body != `{"status":"healthy","message":"peeklock is serving namespace sbemulatorns"}` || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /health: %d %q %q", status, body, hdr.Get("Content-Type"))
	}
	status, body, hdr = f.do("POST", "/health", "", "", nil)
	checkError(t, status, body, hdr, 405, "the method POST is not allowed on /health; use GET", f.host+":health")
}

func TestHTTPErrors(t *testing.T) {
	f := newFixture(t)
	f.create(broker.Entity{Path: "q"}, broker.Entity{Path: "t", Kind: broker.KindTopic})
	root := "sb://" + f.host
	queueEntry := `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect">%s</QueueDescription></content></entry>`
	q := func(inner string) string { return strings.Replace(queueEntry, "%s", inner, 1) }
	tests := []struct {
		name, method, path, auth, body string
		header                         map[string]string
		status                         int
		msg, tracker                   string
	}{
		{"no token", "GET", "/q", "", "", nil, 401,
			"the request has no Authorization header; send a SharedAccessSignature token", "q"},
		{"token for another entity", "GET", "/q", root + "/other", "", nil, 401,
			`the token for "` + root + `/other" does not cover "` + root + `/q"`, "q"},
		{"token for another host", "GET", "/q", "sb://elsewhere/q", "", nil, 401,
			`the token for "sb://elsewhere/q" does not cover "` + root + `/q"`, "q"},
		{"garbage token", "GET", "/q", "", "", map[string]string{"Authorization": "Bearer abc"}, 401,
			`malformed shared access signature: it does not start with "SharedAccessSignature "`, "q"},
		{"missing queue", "GET", "/nope", root, "", nil, 404,
			`The messaging entity 'nope' could not be found`, "nope"},
		{"dead-letter sub-queue", "GET", "/q/$DeadLetterQueue", root, "", nil, 404,
			`"q/$DeadLetterQueue" is a dead-letter sub-queue, not an entity`, "q/$DeadLetterQueue"},
		{"transfer dead-letter sub-queue", "GET", "/q/$Transfer/$DeadLetterQueue", root, "", nil, 404,
			`"q/$Transfer/$DeadLetterQueue" is a transfer dead-letter sub-queue, not an entity`, "q/$Transfer/$DeadLetterQueue"},
		{"root", "GET", "/", root, "", nil, 404,
			"there is no resource at /; address an entity or $Resources/Queues or $Resources/Topics", ""},
		{"subscriptions of a queue", "GET", "/q/Subscriptions", root, "", nil, 404,
			`"q" is a queue, not a topic`, "q/Subscriptions"},
		{"deep path", "GET", "/t/Subscriptions/s/x/y", root, "", nil, 404,
			"there is no resource at /t/Subscriptions/s/x/y", "t/Subscriptions/s/x/y"},
		{"post", "POST", "/q", root, "", nil, 405,
			"the method POST is not allowed on this resource; use GET, PUT, DELETE", "q"},
		{"put a listing", "PUT", "/$Resources/Queues", root, "", nil, 405,
			"the method PUT is not allowed on this resource; use GET", "$Resources/Queues"},
		{"duplicate", "PUT", "/q", root, q(""), nil, 409,
			`The messaging entity 'sbemulatorns:Queue:q' already exists`, "q"},
		{"duplicate of another kind", "PUT", "/t", root, q(""), nil, 409,
			`The messaging entity 'sbemulatorns:Topic:t' already exists`, "t"},
		{"no body", "PUT", "/q2", root, "", nil, 400,
			"the request has no body; send an Atom entry with a description", "q2"},
		{"not xml", "PUT", "/q2", root, "{}", nil, 400,
			"the request body is not well-formed XML: EOF", "q2"},
		{"not an entry", "PUT", "/q2", root, "<feed/>", nil, 400,
			"the request body is a <feed>, not an Atom <entry>", "q2"},
		{"no content", "PUT", "/q2", root, "<entry/>", nil, 400,
			"the Atom entry has no <content>", "q2"},
		{"no description", "PUT", "/q2", root, "<entry><content/></entry>", nil, 400,
			"the entry has neither a QueueDescription nor a TopicDescription", "q2"},
		{"bad duration", "PUT", "/q2", root, q("<LockDuration>30 seconds</LockDuration>"), nil, 400,
			`QueueDescription.LockDuration: "30 seconds" is not an ISO 8601 duration such as PT30S, PT1H30M or P1D: it must start with P`, "q2"},
		{"lock too long", "PUT", "/q2", root, q("<LockDuration>PT6M</LockDuration>"), nil, 400,
			`QueueDescription.LockDuration: "PT6M" is longer than the maximum PT5M`, "q2"},
		{"zero delivery count", "PUT", "/q2", root, q("<MaxDeliveryCount>0</MaxDeliveryCount>"), nil, 400,
			"QueueDescription.MaxDeliveryCount: 0 is out of range [1, 2147483647]", "q2"},
		{"bad boolean", "PUT", "/q2", root, q("<RequiresSession>yes</RequiresSession>"), nil, 400,
			`QueueDescription.RequiresSession: "yes" is not a boolean (true or false)`, "q2"},
		{"bad partitioning", "PUT", "/q2", root, q("<EnablePartitioning>16</EnablePartitioning>"), nil, 400,
			`QueueDescription.EnablePartitioning: "16" is not a boolean (true or false)`, "q2"},
		{"partition too large", "PUT", "/q2", root, q("<EnablePartitioning>true</EnablePartitioning><MaxSizeInMegabytes>134217728</MaxSizeInMegabytes>"), nil, 400,
			"QueueDescription.MaxSizeInMegabytes: 134217728 is out of range [1, 134217727]", "q2"},
		{"unknown status", "PUT", "/q2", root, q("<Status>Paused</Status>"), nil, 400,
			`QueueDescription.Status: "Paused" is not an entity status (Active, Disabled, SendDisabled or ReceiveDisabled)`, "q2"},
		{"idle too short", "PUT", "/q2", root, q("<AutoDeleteOnIdle>PT4M</AutoDeleteOnIdle>"), nil, 400,
			`QueueDescription.AutoDeleteOnIdle: "PT4M" is shorter than the minimum PT5M`, "q2"},
		{"unknown right", "PUT", "/q2", root, q("<AuthorizationRules><AuthorizationRule><Rights><AccessRights>Read</AccessRights></Rights><KeyName>k</KeyName><PrimaryKey>p</PrimaryKey></AuthorizationRule></AuthorizationRules>"), nil, 400,
			`QueueDescription.AuthorizationRules[0].Rights: "Read" is not an access right (Manage, Send or Listen)`, "q2"},
		{"other rule type", "PUT", "/q2", root, q(`<AuthorizationRules><AuthorizationRule xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:type="AllowRule"><KeyName>k</KeyName></AuthorizationRule></AuthorizationRules>`), nil, 400,
			`QueueDescription.AuthorizationRules[0]: the rule type "AllowRule" is not supported; use SharedAccessAuthorizationRule`, "q2"},
		{"bad rule time", "PUT", "/q2", root, q("<AuthorizationRules><AuthorizationRule><CreatedTime>yesterday</CreatedTime><KeyName>k</KeyName><PrimaryKey>p</PrimaryKey></AuthorizationRule></AuthorizationRules>"), nil, 400,
			`QueueDescription.AuthorizationRules[0].CreatedTime: "yesterday" is not an RFC 3339 time`, "q2"},
		{"bad read-only count", "PUT", "/q2", root, q("<MessageCount>many</MessageCount>"), nil, 400,
			`QueueDescription.MessageCount: "many" is not an integer`, "q2"},
		{"rule without key", "PUT", "/q2", root, q("<AuthorizationRules><AuthorizationRule><Rights><AccessRights>Send</AccessRights></Rights><KeyName>k</KeyName></AuthorizationRule></AuthorizationRules>"), nil, 400,
			`authorization rule "k" has no PrimaryKey`, "q2"},
		{"bad name", "PUT", "/bad$name", root, q(""), nil, 400,
			`the queue name "bad$name" is not valid: use letters, digits, '.', '-', '_' and '/', starting and ending with a letter or digit`, "bad$name"},
		{"forward without supplementary token", "PUT", "/q2", root + "/q2", q("<ForwardTo>q</ForwardTo>"), nil, 401,
			`ForwardTo names "q", which the request's token does not cover; send a token for it in the ServiceBusSupplementaryAuthorization header`, "q2"},
		{"forward with a token for another entity", "PUT", "/q2", root + "/q2", q("<ForwardDeadLetteredMessagesTo>q</ForwardDeadLetteredMessagesTo>"),
			map[string]string{"ServiceBusDlqSupplementaryAuthorization": sas.Sign(root+"/t", sas.DefaultKeyName, sas.DefaultKey, time.Now().Add(time.Hour))}, 401,
			`the token in the ServiceBusDlqSupplementaryAuthorization header is for "` + root + `/t" and does not cover ForwardDeadLetteredMessagesTo target "q"`, "q2"},
		{"bad $top", "GET", "/$Resources/Queues?$top=-1", root, "", nil, 400,
			`$top="-1" is not a non-negative integer`, "$Resources/Queues"},
		{"missing rule", "GET", "/t/Subscriptions/s/Rules/r", root, "", nil, 404,
			`The messaging entity 't/Subscriptions/s' could not be found`, "t/Subscriptions/s/Rules/r"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body, hdr := f.do(tc.method, tc.path, tc.auth, tc.body, tc.header)
			checkError(t, status, body, hdr, tc.status, tc.msg, f.host+":"+tc.tracker)
		})
	}
	// Nothing above created anything.
	list, _ := f.eng.Entities(f.ctx)
	if len(list) != 2 {
		t.Fatalf("entities after the failures: %+v", list)
	}
}

// TestForwardingAuthorization: the supplementary header may carry a token
// for the target's URI or, as the Go SDK signs it, for the raw setting.
func TestForwardingAuthorization(t *testing.T) {
	f := newFixture(t)
	f.create(broker.Entity{Path: "target"})
	entry := `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"><ForwardTo>%s</ForwardTo></QueueDescription></content></entry>`
	sign := func(aud string) string {
		return sas.Sign(aud, sas.DefaultKeyName, sas.DefaultKey, time.Now().Add(time.Hour))
	}
	for i, tc := range []struct{ setting, headerAudience string }{
		{"target", "sb://" + f.host + "/target"},
		{"target", "target"},
		{"sb://" + f.host + "/target", "sb://" + f.host + "/target"},
		{"target", ""}, // the request's token is for the namespace
	} {
		path := "/src" + string(rune('0'+i))
		auth := "sb://" + f.host + path
		hdr := map[string]string{"ServiceBusSupplementaryAuthorization": sign(tc.headerAudience)}
		if tc.headerAudience == "" {
			auth, hdr = "sb://"+f.host, nil
		}
		status, body, _ := f.do("PUT", path, auth, strings.Replace(entry, "%s", tc.setting, 1), hdr)
		if status != 201 {
			t.Fatalf("%+v: %d %s", tc, status, body)
		}
		ent, err := f.eng.Entity(f.ctx, path[1:])
		if err != nil || ent.Settings.ForwardTo != "target" {
			t.Fatalf("%+v: engine %v %+v", tc, err, ent.Settings)
		}
		if !strings.Contains(body, "<ForwardTo>sb://"+f.host+"/target</ForwardTo>") {
			t.Fatalf("%+v: answer lacks the ForwardTo URI: %s", tc, body)
		}
	}
}

// TestHostOption: with Options.Host, tokens may name that host and answers
// use it.
func TestHostOption(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.CreateEntity(context.Background(), broker.Entity{Path: "q", Settings: broker.EntitySettings{ForwardTo: "r"}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHandler(eng, Options{Host: "sbemulatorns.local", Keys: map[string]string{"k": "secret"}}))
	defer srv.Close()
	for _, tc := range []struct {
		audience, key string
		status        int
	}{
		{"sb://sbemulatorns.local/q", "secret", 200},
		{"sb://" + strings.TrimPrefix(srv.URL, "http://") + "/q", "secret", 200},
		{"sb://sbemulatorns.local/q", "SAS_KEY_VALUE", 401},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/q", nil)
		req.Header.Set("Authorization", sas.Sign(tc.audience, "k", tc.key, time.Now().Add(time.Minute)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Fatalf("%+v: %d %s", tc, resp.StatusCode, b)
		}
		if tc.status == 200 && !strings.Contains(string(b), "<ForwardTo>sb://sbemulatorns.local/r</ForwardTo>") ||
			tc.status == 200 && !strings.Contains(string(b), "<id>https://sbemulatorns.local/q</id>") {
			t.Fatalf("answer does not use the configured host: %s", b)
		}
	}
}

// TestRealClockSDK runs the SDK against a handler on the real clock.
func TestRealClockSDK(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv := httptest.NewTLSServer(NewHandler(eng, Options{}))
	defer srv.Close()
	f := &fixture{t: t, ctx: context.Background(), eng: eng, srv: srv, host: strings.TrimPrefix(srv.URL, "https://")}
	c := f.sdk()
	if _, err := c.CreateQueue(f.ctx, "rt", nil); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	ns, err := c.GetNamespaceProperties(f.ctx, nil)
	if err != nil {
		t.Fatalf("GetNamespaceProperties: %v", err)
	}
	if ns.Name != "sbemulatorns" || ns.SKU != "Standard" || time.Since(ns.CreatedTime) > time.Minute || !ns.CreatedTime.Equal(ns.ModifiedTime) {
		t.Fatalf("namespace %+v", ns)
	}
}
