package atom

import (
	"bytes"
	"encoding/xml"
	"reflect"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

func ref[T any](v T) *T { return &v }

var (
	t1 = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	t2 = time.Date(2024, 5, 7, 8, 9, 10, 0, time.UTC)
)

// Documents with every element set, one of each kind.
func fullQueue() *QueueDescription {
	return &QueueDescription{
		LockDuration: ref(Duration(45 * time.Second)), MaxSizeInMegabytes: ref(Int(2048)), RequiresDuplicateDetection: ref(Bool(true)),
		RequiresSession: ref(Bool(true)), DefaultMessageTimeToLive: ref(Duration(broker.MaxTimeToLive)),
		DeadLetteringOnMessageExpiration: ref(Bool(true)), DuplicateDetectionHistoryTimeWindow: ref(Duration(10 * time.Minute)),
		MaxDeliveryCount: ref(Int(7)), EnableBatchedOperations: ref(Bool(false)), SizeInBytes: 542, MessageCount: 9,
		IsAnonymousAccessible: false, AuthorizationRules: AuthorizationRules{Rules: []AuthorizationRule{
			{Type: SharedAccessAuthorizationRule, ClaimType: "SharedAccessKey", ClaimValue: "None", Rights: []string{"Listen", "Send"},
				CreatedTime: &Time{t1}, ModifiedTime: &Time{t2}, KeyName: "app", PrimaryKey: "cHJpbWFyeQ==", SecondaryKey: "c2Vjb25kYXJ5"},
			{Type: SharedAccessAuthorizationRule, ClaimType: "SharedAccessKey", ClaimValue: "None", Rights: []string{"Manage", "Listen", "Send"},
				KeyName: "admin", PrimaryKey: "YWRtaW4="},
		}},
		Status: ref("ReceiveDisabled"), ForwardTo: ref("sb://ns.servicebus.windows.net/target"), UserMetadata: ref(`owner: "ops" & <team>`),
		CreatedAt: Time{t1}, UpdatedAt: Time{t2}, AccessedAt: Time{}, SupportOrdering: true,
		CountDetails:     CountDetails{ActiveMessageCount: 3, DeadLetterMessageCount: 2, ScheduledMessageCount: 1, TransferMessageCount: 0, TransferDeadLetterMessageCount: 1},
		AutoDeleteOnIdle: ref(Duration(time.Hour)), EnablePartitioning: ref(Bool(true)), EntityAvailabilityStatus: "Available",
		ForwardDeadLetteredMessagesTo: ref("dlq-target"), EnableExpress: false, MaxMessageSizeInKilobytes: ref(Int(1024)),
	}
}

func fullTopic() *TopicDescription {
	return &TopicDescription{
		DefaultMessageTimeToLive: ref(Duration(14 * 24 * time.Hour)), MaxSizeInMegabytes: ref(Int(5120)), RequiresDuplicateDetection: ref(Bool(true)),
		DuplicateDetectionHistoryTimeWindow: ref(Duration(time.Minute)), EnableBatchedOperations: ref(Bool(true)), SizeInBytes: 100,
		FilteringMessagesBeforePublishing: false, IsAnonymousAccessible: false, Status: ref("Active"), UserMetadata: ref("events"),
		CreatedAt: Time{t1}, UpdatedAt: Time{t1}, AccessedAt: Time{t2}, SupportOrdering: ref(Bool(true)),
		CountDetails: CountDetails{ScheduledMessageCount: 4}, SubscriptionCount: 2, AutoDeleteOnIdle: ref(Duration(broker.MaxTimeToLive)),
		EnablePartitioning: ref(Bool(false)), EntityAvailabilityStatus: "Available", EnableSubscriptionPartitioning: false, EnableExpress: false,
		MaxMessageSizeInKilobytes: ref(Int(256)), SQLFilterCount: 2, CorrelationFilterCount: 1,
	}
}

func fullSubscription() *SubscriptionDescription {
	return &SubscriptionDescription{
		LockDuration: ref(Duration(time.Minute)), RequiresSession: ref(Bool(false)), DefaultMessageTimeToLive: ref(Duration(10 * time.Minute)),
		DeadLetteringOnMessageExpiration: ref(Bool(true)), DeadLetteringOnFilterEvaluationExceptions: ref(Bool(false)),
		DefaultRuleDescription: &RuleDescription{Filter: &Filter{Type: SQLFilter, SQLExpression: ref("color = 'red'")},
			Action: &Action{Type: SQLRuleAction, SQLExpression: ref("SET routed = true")}, Name: ref("red")},
		MessageCount: 3, MaxDeliveryCount: ref(Int(3)), EnableBatchedOperations: ref(Bool(false)), Status: ref("SendDisabled"),
		ForwardTo: ref("sb://ns/target"), UserMetadata: ref("routed"), CreatedAt: Time{t1}, UpdatedAt: Time{t2}, AccessedAt: Time{t2},
		CountDetails: CountDetails{ActiveMessageCount: 3}, AutoDeleteOnIdle: ref(Duration(5 * time.Minute)),
		ForwardDeadLetteredMessagesTo: ref("sb://ns/target"), EntityAvailabilityStatus: "Available",
	}
}

func rules() map[string]*RuleDescription {
	return map[string]*RuleDescription{
		"sql": {Filter: &Filter{Type: SQLFilter, SQLExpression: ref("quantity > @min AND region = @region"), CompatibilityLevel: CompatibilityLevel,
			Parameters: NewKeyValues(map[string]any{"@min": int64(5), "@region": `west & "north"`, "@when": t1, "@none": nil})},
			Action: &Action{Type: SQLRuleAction, SQLExpression: ref("SET tier = @tier"), Parameters: NewKeyValues(map[string]any{"@tier": "gold", "@wait": 90 * time.Second}),
				CompatibilityLevel: CompatibilityLevel},
			CreatedAt: &Time{t1}, Name: ref("sql")},
		"correlation": {Filter: &Filter{Type: CorrelationFilter, CorrelationID: ref("cart-7"), MessageID: ref("m-1"), To: ref("shop"), ReplyTo: ref("replies"),
			Label: ref("OrderPlaced"), SessionID: ref("s-1"), ReplyToSessionID: ref("rs-1"), ContentType: ref("application/json"),
			Properties: NewKeyValues(map[string]any{"tenant": "acme", "tier": 2, "big": int64(1) << 40, "vip": true, "ratio": 0.25, "blob": []byte{0, 1},
				"at": t2, "ttl": 24 * time.Hour, "gone": nil})},
			Action: &Action{Type: EmptyRuleAction}, CreatedAt: &Time{t2}, Name: ref("correlation")},
		"true":  {Filter: &Filter{Type: TrueFilter, SQLExpression: ref("1=1"), CompatibilityLevel: CompatibilityLevel}, Action: &Action{Type: EmptyRuleAction}, CreatedAt: &Time{}, Name: ref("$Default")},
		"false": {Filter: &Filter{Type: FalseFilter, SQLExpression: ref("1=0"), CompatibilityLevel: CompatibilityLevel}, Action: &Action{Type: EmptyRuleAction}, CreatedAt: &Time{t1}, Name: ref("never")},
	}
}

func entryOf(title string, c Content) Entry {
	c.Type = ContentTypeXML
	id := "https://ns.servicebus.windows.net/" + title
	return Entry{ID: id, Title: &Text{Type: "text", Text: title}, Published: &Time{t2}, Updated: &Time{t2}, Author: &Author{Name: "ns"},
		Link: &Link{Rel: "self", Href: id}, Content: &c}
}

// forget clears what decoding records that encoding does not take from
// the value (the names of elements as read).
func forget(doc any) any {
	switch d := doc.(type) {
	case *Entry:
		d.XMLName = xml.Name{}
	case *Feed:
		d.XMLName = xml.Name{}
		for i := range d.Entries {
			d.Entries[i].XMLName = xml.Name{}
		}
	}
	return doc
}

// TestRoundTrip: every kind of document our encoder writes, our decoder
// reads back unchanged, and writing what was read gives the same bytes.
func TestRoundTrip(t *testing.T) {
	docs := map[string]any{
		"queue":        ref(entryOf("q", Content{Queue: fullQueue()})),
		"empty queue":  ref(entryOf("q0", Content{Queue: &QueueDescription{}})),
		"topic":        ref(entryOf("t", Content{Topic: fullTopic()})),
		"subscription": ref(entryOf("t/Subscriptions/s", Content{Subscription: fullSubscription()})),
		"namespace": ref(entryOf("$namespaceinfo", Content{Namespace: &NamespaceInfo{CreatedTime: Time{t1}, MessagingSKU: "Premium",
			MessagingUnits: ref(Int(2)), ModifiedTime: Time{t2}, Name: "ns", NamespaceType: "Messaging"}})),
		"put body": &Entry{Content: &Content{Type: ContentTypeXML, Queue: &QueueDescription{LockDuration: ref(Duration(time.Minute)), Status: ref("Active")}}},
		"empty feed": &Feed{Title: Text{Type: "text", Text: "Topics"}, ID: "https://ns/$Resources/Topics", Updated: Time{t2},
			Links: []Link{{Rel: "self", Href: "https://ns/$Resources/Topics"}}},
	}
	feed := &Feed{Title: Text{Type: "text", Text: "Rules"}, ID: "https://ns/t/Subscriptions/s/Rules", Updated: Time{t2},
		Links: []Link{{Rel: "self", Href: "https://ns/t/Subscriptions/s/Rules"}, {Rel: "next", Href: "https://ns/t/Subscriptions/s/Rules?$skip=2&$top=2"}}}
	for name, r := range rules() {
		docs["rule "+name] = ref(entryOf(name, Content{Rule: r}))
		e := entryOf(name, Content{Rule: r})
		e.Base = "https://ns/t/Subscriptions/s/Rules?$skip=0&$top=100"
		feed.Entries = append(feed.Entries, e)
	}
	docs["rule feed"] = feed
	docs["queue feed"] = &Feed{Title: Text{Type: "text", Text: "Queues"}, ID: "https://ns/$Resources/Queues", Updated: Time{t2},
		Links:   []Link{{Rel: "self", Href: "https://ns/$Resources/Queues"}},
		Entries: []Entry{entryOf("a", Content{Queue: fullQueue()}), entryOf("b", Content{Queue: &QueueDescription{}})}}

	for name, doc := range docs {
		b, err := Marshal(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back := reflect.New(reflect.TypeOf(doc).Elem()).Interface()
		if err := xml.Unmarshal(b, back); err != nil {
			t.Fatalf("%s: reading %s: %v", name, b, err)
		}
		if !reflect.DeepEqual(forget(back), doc) {
			t.Errorf("%s: read back\n%#v\nwant\n%#v\nfrom %s", name, back, doc, b)
			continue
		}
		again, err := Marshal(back)
		if err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: written again\n%s\nwant\n%s", name, again, b)
		}
	}

	e := Error{Code: 404, Detail: `the messaging entity "q" could not be found & <gone>. TrackingId:1, SystemTracker:ns:q, Timestamp:2024-05-06T07:08:09Z`}
	b := e.Marshal()
	want := xml.Header + `<Error><Code>404</Code><Detail>the messaging entity "q" could not be found &amp; &lt;gone&gt;. TrackingId:1, SystemTracker:ns:q, Timestamp:2024-05-06T07:08:09Z</Detail></Error>`
	var back Error
	if string(b) != want || xml.Unmarshal(b, &back) != nil || back.Code != e.Code || back.Detail != e.Detail {
		t.Errorf("error document %s read back as %+v", b, back)
	}
	if got := (Error{Code: 400, Detail: "bad\x00byte \xff"}).Marshal(); !bytes.Contains(got, []byte("<Detail>bad\uFFFDbyte \uFFFD</Detail>")) {
		t.Errorf("characters XML cannot hold: %s", got)
	}
}
