package admin

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden documents in testdata/golden")

// goldenHost is the namespace host of the golden documents.
const goldenHost = "peeklock.test"

// goldenStart is the fake clock's time when the golden scenario starts; its
// fraction shows how times with fractional seconds are written.
var goldenStart = time.Date(2025, 3, 4, 5, 6, 7, 891000000, time.UTC)

// goldenServer is the admin handler in front of an engine on a fake clock,
// called without a listener.
type goldenServer struct {
	t     *testing.T
	ctx   context.Context
	clock *clockwork.FakeClock
	eng   *engine.Engine
	h     http.Handler
}

func newGoldenServer(t *testing.T) *goldenServer {
	t.Helper()
	clock := clockwork.NewFakeClockAt(goldenStart)
	eng, err := engine.New(engine.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return &goldenServer{t: t, ctx: context.Background(), clock: clock, eng: eng, h: NewHandler(eng, Options{Host: goldenHost})}
}

// do answers one request; auth false sends no Authorization header.
func (g *goldenServer) do(method, path, body string, auth bool, header map[string]string) *httptest.ResponseRecorder {
	g.t.Helper()
	req := httptest.NewRequest(method, "http://"+goldenHost+path, strings.NewReader(body))
	if auth {
		req.Header.Set("Authorization", sas.Sign("sb://"+goldenHost+"/", sas.DefaultKeyName, sas.DefaultKey, g.clock.Now().Add(time.Hour)))
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	g.h.ServeHTTP(rec, req)
	return rec
}

// put sends a PUT and wants status.
func (g *goldenServer) put(path, body string, status int, header map[string]string) {
	g.t.Helper()
	if rec := g.do(http.MethodPut, path, body, true, header); rec.Code != status {
		g.t.Fatalf("PUT %s: %d, want %d: %s", path, rec.Code, status, rec.Body)
	}
}

// trackingIDs are the random part of an error document.
var trackingIDs = regexp.MustCompile(`TrackingId:[0-9a-f-]{36}`)

// Entry bodies as the SDKs send them.
const (
	goldenEntryStart = `<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">`
	goldenEntryEnd   = `</content></entry>`
	goldenNS         = ` xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"`
)

func goldenEntry(desc string) string { return goldenEntryStart + desc + goldenEntryEnd }

// goldenScenario builds every kind of entity, rule and count, through the
// engine and through PUT requests.
func goldenScenario(g *goldenServer) {
	t := g.t
	step := func() { g.clock.Advance(1250 * time.Millisecond) }
	if err := g.eng.CreateEntity(g.ctx, broker.Entity{Path: "target"}); err != nil {
		t.Fatal(err)
	}
	step()
	// A queue with every setting the admin API takes, and two
	// authorization rules.
	g.put("/settings", goldenEntry(`<QueueDescription`+goldenNS+`>`+
		`<LockDuration>PT45.5S</LockDuration><MaxSizeInMegabytes>2048</MaxSizeInMegabytes>`+
		`<RequiresDuplicateDetection>true</RequiresDuplicateDetection><RequiresSession>false</RequiresSession>`+
		`<DefaultMessageTimeToLive>P1DT2H</DefaultMessageTimeToLive><DeadLetteringOnMessageExpiration>true</DeadLetteringOnMessageExpiration>`+
		`<DuplicateDetectionHistoryTimeWindow>PT20M</DuplicateDetectionHistoryTimeWindow><MaxDeliveryCount>7</MaxDeliveryCount>`+
		`<EnableBatchedOperations>false</EnableBatchedOperations>`+
		`<AuthorizationRules><AuthorizationRule i:type="SharedAccessAuthorizationRule"><ClaimType>SharedAccessKey</ClaimType><ClaimValue>None</ClaimValue>`+
		`<Rights><AccessRights>Send</AccessRights><AccessRights>Listen</AccessRights></Rights>`+
		`<CreatedTime>2024-05-06T07:08:09.1234567Z</CreatedTime><ModifiedTime>2024-05-07T07:08:09Z</ModifiedTime>`+
		`<KeyName>app</KeyName><PrimaryKey>cHJpbWFyeQ==</PrimaryKey><SecondaryKey>c2Vjb25kYXJ5</SecondaryKey></AuthorizationRule>`+
		`<AuthorizationRule i:type="SharedAccessAuthorizationRule"><Rights><AccessRights>Manage</AccessRights><AccessRights>Send</AccessRights><AccessRights>Listen</AccessRights></Rights>`+
		`<KeyName>admin</KeyName><PrimaryKey>YWRtaW4=</PrimaryKey></AuthorizationRule></AuthorizationRules>`+
		`<Status>ReceiveDisabled</Status><ForwardTo>sb://Peeklock.Test/target</ForwardTo>`+
		`<UserMetadata>owner: payments &amp; "ledger" &lt;team&gt; 'ops'</UserMetadata>`+
		`<AutoDeleteOnIdle>PT1H</AutoDeleteOnIdle><EnablePartitioning>true</EnablePartitioning>`+
		`<ForwardDeadLetteredMessagesTo>target</ForwardDeadLetteredMessagesTo><MaxMessageSizeInKilobytes>1024</MaxMessageSizeInKilobytes>`+
		`</QueueDescription>`), http.StatusCreated, nil)
	step()
	// A queue with the defaults and messages in every state.
	if err := g.eng.CreateEntity(g.ctx, broker.Entity{Path: "orders"}); err != nil {
		t.Fatal(err)
	}
	step()
	g.fill("orders")
	step()
	// A topic with settings, and subscriptions with every kind of rule.
	g.put("/events", goldenEntry(`<TopicDescription`+goldenNS+`>`+
		`<DefaultMessageTimeToLive>P14D</DefaultMessageTimeToLive><MaxSizeInMegabytes>5120</MaxSizeInMegabytes>`+
		`<RequiresDuplicateDetection>true</RequiresDuplicateDetection><DuplicateDetectionHistoryTimeWindow>PT1M</DuplicateDetectionHistoryTimeWindow>`+
		`<EnableBatchedOperations>true</EnableBatchedOperations><Status>Active</Status><UserMetadata>events</UserMetadata>`+
		`<AutoDeleteOnIdle>P10675199DT2H48M5.4775807S</AutoDeleteOnIdle><MaxMessageSizeInKilobytes>256</MaxMessageSizeInKilobytes>`+
		`</TopicDescription>`), http.StatusCreated, nil)
	step()
	g.put("/events/Subscriptions/all", goldenEntry(`<SubscriptionDescription`+goldenNS+`></SubscriptionDescription>`), http.StatusCreated, nil)
	step()
	g.put("/events/Subscriptions/routed", goldenEntry(`<SubscriptionDescription`+goldenNS+`>`+
		`<LockDuration>PT1M</LockDuration><RequiresSession>false</RequiresSession><DefaultMessageTimeToLive>PT10M</DefaultMessageTimeToLive>`+
		`<DeadLetteringOnMessageExpiration>true</DeadLetteringOnMessageExpiration>`+
		`<DefaultRuleDescription><Filter i:type="SqlFilter"><SqlExpression>color = 'red'</SqlExpression></Filter>`+
		`<Action i:type="SqlRuleAction"><SqlExpression>SET routed = true</SqlExpression></Action><Name>red</Name></DefaultRuleDescription>`+
		`<MaxDeliveryCount>3</MaxDeliveryCount><EnableBatchedOperations>false</EnableBatchedOperations><Status>SendDisabled</Status>`+
		`<ForwardTo>target</ForwardTo><UserMetadata>routed</UserMetadata><ForwardDeadLetteredMessagesTo>sb://peeklock.test/target</ForwardDeadLetteredMessagesTo>`+
		`<AutoDeleteOnIdle>PT5M</AutoDeleteOnIdle></SubscriptionDescription>`), http.StatusCreated, nil)
	step()
	rule := func(name, filter, action string) {
		g.put("/events/Subscriptions/routed/Rules/"+name, goldenEntry(`<RuleDescription`+goldenNS+`>`+filter+action+`<Name>`+name+`</Name></RuleDescription>`), http.StatusCreated, nil)
		step()
	}
	const value = `<KeyValueOfstringanyType><Key>%s</Key><Value i:type="d6p1:%s" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">%s</Value></KeyValueOfstringanyType>`
	kv := func(key, typ, text string) string { return fmt.Sprintf(value, key, typ, text) }
	rule("sql", `<Filter i:type="SqlFilter"><SqlExpression>quantity &gt; @min AND region = @region AND since &lt; @when</SqlExpression>`+
		`<Parameters>`+kv("@min", "long", "5")+kv("@region", "string", `west &amp; "north"`)+kv("@when", "dateTime", "2025-01-02T03:04:05.5Z")+
		kv("@unused", "double", "1.5")+`<KeyValueOfstringanyType><Key>@none</Key><Value i:nil="true"/></KeyValueOfstringanyType></Parameters></Filter>`,
		`<Action i:type="SqlRuleAction"><SqlExpression>SET tier = @tier; SET wait = @wait</SqlExpression><Parameters>`+
			kv("@tier", "string", "gold")+kv("@wait", "duration", "PT1M30S")+`</Parameters></Action>`)
	rule("correlation", `<Filter i:type="CorrelationFilter"><CorrelationId>cart-7</CorrelationId><MessageId>m-1</MessageId><To>shop</To>`+
		`<ReplyTo>replies</ReplyTo><Label>OrderPlaced</Label><SessionId>s-1</SessionId><ReplyToSessionId>rs-1</ReplyToSessionId>`+
		`<ContentType>application/json</ContentType><Properties>`+kv("tenant", "string", "acme")+kv("tier", "int", "2")+
		kv("big", "long", "9007199254740993")+kv("vip", "boolean", "true")+kv("ratio", "double", "0.25")+
		kv("blob", "base64Binary", "AAEC")+kv("at", "dateTime", "2025-01-02T03:04:05Z")+kv("ttl", "duration", "P1D")+
		`<KeyValueOfstringanyType><Key>gone</Key><Value i:nil="true"/></KeyValueOfstringanyType></Properties></Filter>`,
		`<Action i:type="EmptyRuleAction"/>`)
	rule("never", `<Filter i:type="FalseFilter"><SqlExpression>1=0</SqlExpression></Filter>`, ``)
	rule("always", `<Filter i:type="TrueFilter"><SqlExpression>1=1</SqlExpression></Filter>`, `<Action i:type="SqlRuleAction"><SqlExpression>SET seen = 1</SqlExpression></Action>`)
	g.fill("events")
	step()
}

// fill sends, locks, defers, dead-letters and schedules messages of entity
// (a queue or topic); the subscriptions of a topic get copies.
func (g *goldenServer) fill(entity string) {
	t := g.t
	var msgs []*broker.Message
	for i := range 6 {
		msgs = append(msgs, &broker.Message{MessageID: entity + "-" + string(rune('a'+i)), Body: []byte("hello"),
			ApplicationProperties: map[string]any{"color": "red", "quantity": int64(9), "region": "east"}})
	}
	msgs = append(msgs, &broker.Message{MessageID: entity + "-later", Body: []byte("later"), ScheduledEnqueueTime: g.clock.Now().Add(time.Hour)})
	if err := g.eng.Send(g.ctx, entity, msgs); err != nil {
		t.Fatal(err)
	}
	receiver := entity
	if entity == "events" {
		receiver = "events/Subscriptions/all"
	}
	got, err := g.eng.Receive(g.ctx, broker.ReceiveRequest{Entity: receiver, Mode: broker.PeekLock, Max: 3})
	if err != nil || len(got) != 3 {
		t.Fatalf("receive %s: %d, %v", receiver, len(got), err)
	}
	for i, kind := range []broker.SettleKind{broker.Defer, broker.DeadLetter} {
		if err := g.eng.Settle(g.ctx, broker.Settlement{Kind: kind, Entity: receiver, Token: got[i].LockToken, Reason: "golden"}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGoldenDocuments compares every document the admin API writes, byte
// for byte, with testdata/golden: the ATOM entries and feeds of queues,
// topics, subscriptions and rules (every filter and action), CountDetails
// and authorization rules inside them, the namespace info, and error
// bodies. go test -run TestGoldenDocuments -update rewrites them.
func TestGoldenDocuments(t *testing.T) {
	g := newGoldenServer(t)
	goldenScenario(g)
	type doc struct {
		file, method, path, body string
		auth                     bool
		header                   map[string]string
		status                   int
		contentType              string
	}
	const (
		entry = atom.ContentTypeEntry
		feed  = atom.ContentTypeFeed
		xerr  = atom.ContentTypeError
	)
	docs := []doc{
		{file: "queue-settings.xml", method: "GET", path: "/settings", auth: true, status: 200, contentType: entry},
		{file: "queue-counts.xml", method: "GET", path: "/orders", auth: true, status: 200, contentType: entry},
		{file: "topic.xml", method: "GET", path: "/events", auth: true, status: 200, contentType: entry},
		{file: "subscription-all.xml", method: "GET", path: "/events/Subscriptions/all", auth: true, status: 200, contentType: entry},
		{file: "subscription-routed.xml", method: "GET", path: "/events/Subscriptions/routed", auth: true, status: 200, contentType: entry},
		{file: "rule-default.xml", method: "GET", path: "/events/Subscriptions/all/Rules/$Default", auth: true, status: 200, contentType: entry},
		{file: "rule-sql.xml", method: "GET", path: "/events/Subscriptions/routed/Rules/sql", auth: true, status: 200, contentType: entry},
		{file: "rule-correlation.xml", method: "GET", path: "/events/Subscriptions/routed/Rules/correlation", auth: true, status: 200, contentType: entry},
		{file: "rule-false.xml", method: "GET", path: "/events/Subscriptions/routed/Rules/never", auth: true, status: 200, contentType: entry},
		{file: "rule-true-action.xml", method: "GET", path: "/events/Subscriptions/routed/Rules/always", auth: true, status: 200, contentType: entry},
		{file: "feed-queues.xml", method: "GET", path: "/$Resources/Queues", auth: true, status: 200, contentType: feed},
		{file: "feed-topics.xml", method: "GET", path: "/$Resources/Topics?$skip=0&$top=10", auth: true, status: 200, contentType: feed},
		{file: "feed-subscriptions.xml", method: "GET", path: "/events/Subscriptions", auth: true, status: 200, contentType: feed},
		{file: "feed-rules.xml", method: "GET", path: "/events/Subscriptions/routed/Rules", auth: true, status: 200, contentType: feed},
		{file: "feed-empty.xml", method: "GET", path: "/$Resources/Topics?$skip=5", auth: true, status: 200, contentType: feed},
		{file: "namespace.xml", method: "GET", path: "/$namespaceinfo", auth: true, status: 200, contentType: entry},
		{file: "rule-put.xml", method: "PUT", path: "/events/Subscriptions/all/Rules/late", auth: true, status: 201, contentType: entry,
			body: goldenEntry(`<RuleDescription` + goldenNS + `><Filter i:type="SqlFilter"><SqlExpression>1=1</SqlExpression></Filter><Action i:type="EmptyRuleAction"/><Name>late</Name></RuleDescription>`)},
		{file: "error-not-found.xml", method: "GET", path: "/missing", auth: true, status: 404, contentType: xerr},
		{file: "error-unauthorized.xml", method: "GET", path: "/orders", status: 401, contentType: xerr},
		{file: "error-conflict.xml", method: "PUT", path: "/orders", auth: true, status: 409, contentType: xerr,
			body: goldenEntry(`<QueueDescription` + goldenNS + `/>`)},
		{file: "error-bad-value.xml", method: "PUT", path: "/bad", auth: true, status: 400, contentType: xerr,
			body: goldenEntry(`<QueueDescription` + goldenNS + `><LockDuration>30 seconds &amp; "more" &lt;x&gt; 'y'</LockDuration></QueueDescription>`)},
		{file: "error-bad-xml.xml", method: "PUT", path: "/bad", auth: true, status: 400, contentType: xerr, body: `<entry><content>`},
		{file: "error-method.xml", method: "POST", path: "/orders", auth: true, status: 405, contentType: xerr},
	}
	dir := filepath.Join("testdata", "golden")
	if *updateGolden {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range docs {
		rec := g.do(d.method, d.path, d.body, d.auth, d.header)
		if rec.Code != d.status || rec.Header().Get("Content-Type") != d.contentType {
			t.Errorf("%s %s: %d %q, want %d %q: %s", d.method, d.path, rec.Code, rec.Header().Get("Content-Type"), d.status, d.contentType, rec.Body)
			continue
		}
		got := trackingIDs.ReplaceAll(rec.Body.Bytes(), []byte("TrackingId:00000000-0000-0000-0000-000000000000"))
		path := filepath.Join(dir, d.file)
		if *updateGolden {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestGoldenDocuments -update writes it)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s %s differs from %s:\n got %s\nwant %s", d.method, d.path, path, got, want)
		}
	}
}
