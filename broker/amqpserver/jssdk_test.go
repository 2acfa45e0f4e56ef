package amqpserver

import (
	"fmt"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// The official JavaScript SDK (@azure/service-bus 7.9.5 on rhea 3) against
// the listener: each test runs one scenario script of jssdk/ (one node
// process) on a fresh engine and checks every value it reports. Notes on
// what the JavaScript SDK does differently from the Go SDK:
//   - deliveryCount is the header's delivery-count as is, the failed
//     deliveries (0 on the first delivery; a deferral counts one, as on
//     Service Bus), where the Go SDK adds one;
//     every message carries the header, peeked ones too;
//   - application properties come back as JavaScript values: every AMQP
//     number type as number, timestamps as milliseconds (the SDK turns
//     Dates into numbers on receive).

func TestJSSDKQueue(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	got := runNode(t, env, "queue.mjs", "q")
	checkJSON(t, got, `{
	"batchMaxSize": true,
	"batchCount": 3,
	"received": [
		{"body": "single", "bodyType": "string", "messageId": "m1", "sequenceNumber": 1, "deliveryCount": 0, "state": "active"},
		{"body": {"id": "m2"}, "bodyType": "object", "messageId": "m2", "sequenceNumber": 2, "deliveryCount": 0, "state": "active"},
		{"body": {"id": "m3"}, "bodyType": "object", "messageId": "m3", "sequenceNumber": 3, "deliveryCount": 0, "state": "active"},
		{"body": {"id": "m4"}, "bodyType": "object", "messageId": "m4", "sequenceNumber": 4, "deliveryCount": 0, "state": "active"}
	],
	"lockTokens": [true, true, true, true],
	"renewLater": true,
	"abandoned": {"body": {"id": "m2"}, "bodyType": "object", "messageId": "m2", "sequenceNumber": 2, "deliveryCount": 1, "state": "active"},
	"abandonedProps": {"reason": "abandoned"},
	"deferred": [{"body": {"id": "m3"}, "bodyType": "object", "messageId": "m3", "sequenceNumber": 3, "deliveryCount": 1, "state": "deferred"}],
	"deadLettered": [{"body": {"id": "m4"}, "bodyType": "object", "messageId": "m4", "sequenceNumber": 4, "deliveryCount": 0, "state": "active",
		"deadLetterReason": "bad", "deadLetterErrorDescription": "it is bad"}],
	"secondComplete": "The message has either been deleted or already settled",
	"receiveAndDelete": [
		{"body": "rd1", "bodyType": "string", "messageId": "rd1", "sequenceNumber": 5, "deliveryCount": 0, "state": "active"},
		{"body": "rd2", "bodyType": "string", "messageId": "rd2", "sequenceNumber": 6, "deliveryCount": 0, "state": "active"}
	],
	"receiveAndDeleteLockToken": [null, null],
	"scheduled": [7, 8],
	"scheduledPeek": [
		{"body": "s1", "bodyType": "string", "messageId": "s1", "sequenceNumber": 7, "deliveryCount": 0, "state": "scheduled", "scheduledAt": true},
		{"body": "s2", "bodyType": "string", "messageId": "s2", "sequenceNumber": 8, "deliveryCount": 0, "state": "scheduled", "scheduledAt": true}
	],
	"afterCancel": ["s2"],
	"pages": [["p1@9:0", "p2@10:0"], ["p3@11:0", "p4@12:0"], ["p5@13:0"], [], ["p4@12:0", "p5@13:0"]]
}`)
	// Left: the five peeked messages p1-p5, nothing locked, deferred,
	// scheduled or dead-lettered.
	if c := env.counts("q"); c.Active != 5 || c.Locked != 0 || c.Deferred != 0 || c.Scheduled != 0 || c.DeadLettered != 0 {
		t.Errorf("counts after the scenario: %+v, want 5 active and nothing else", c)
	}
}

// TestJSSDKWithoutMessageID sends messages without a messageId: the broker
// gives each a GUID (as Service Bus does), without which the JavaScript SDK
// cannot complete, abandon or dead-letter them. The delivery counts follow
// §3: the abandon counts one; the dead-lettered message, received from the
// dead-letter sub-queue, has no failed delivery.
func TestJSSDKWithoutMessageID(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	got := runNode(t, env, "nomessageid.mjs", "q")
	checkJSON(t, got, `{
	"received": [
		{"body": "alone", "bodyType": "string", "messageId": "GUID", "sequenceNumber": 1, "deliveryCount": 0, "state": "active"},
		{"body": "batched 1", "bodyType": "string", "messageId": "GUID", "sequenceNumber": 2, "deliveryCount": 0, "state": "active"},
		{"body": "batched 2", "bodyType": "string", "messageId": "GUID", "sequenceNumber": 3, "deliveryCount": 0, "state": "active"}
	],
	"distinctIds": 3,
	"complete": "ok", "abandon": "ok", "deadLetter": "ok",
	"again": [{"body": "batched 1", "bodyType": "string", "messageId": "GUID", "sequenceNumber": 2, "deliveryCount": 1, "state": "active"}],
	"againSameId": true, "againComplete": "ok",
	"deadLettered": [{"body": "batched 2", "bodyType": "string", "messageId": "GUID", "sequenceNumber": 3, "deliveryCount": 0, "state": "active",
		"deadLetterReason": "no id", "deadLetterErrorDescription": "dead-lettered without a messageId of its own"}],
	"deadLetteredSameId": true, "deadLetteredComplete": "ok",
	"close": "ok"
}`)
	if c := env.counts("q"); c.Active != 0 || c.Locked != 0 || c.DeadLettered != 0 {
		t.Errorf("counts after the scenario: %+v, want nothing left", c)
	}
}

func TestJSSDKPropertiesAndBodies(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("props", broker.EntitySettings{})
	got := runNode(t, env, "props.mjs", "props")
	checkJSON(t, got, `{
	"messages": [
		{"body": {"hello": "world", "n": [1, 2]}, "bodyType": "object", "messageId": "props", "sequenceNumber": 1, "deliveryCount": 0, "state": "active", "subject": "subj"},
		{"body": "plain text", "bodyType": "string", "messageId": "string", "sequenceNumber": 2, "deliveryCount": 0, "state": "active"},
		{"body": "hex:000102ff", "bodyType": "Buffer", "messageId": "buffer", "sequenceNumber": 3, "deliveryCount": 0, "state": "active"},
		{"body": {"k": [1, "two"]}, "bodyType": "object", "messageId": "value", "sequenceNumber": 4, "deliveryCount": 0, "state": "active"},
		{"body": [[1, 2], ["x"]], "bodyType": "object", "messageId": "sequence", "sequenceNumber": 5, "deliveryCount": 0, "state": "active"}
	],
	"properties": {
		"str": ["string", "text"], "zero": ["number", 0], "small": ["number", 42], "uint": ["number", 300000],
		"big": ["number", 5000000000], "neg": ["number", -7], "bigneg": ["number", -5000000000], "frac": ["number", 1.5],
		"yes": ["boolean", true], "no": ["boolean", false], "when": ["number", 1704164645678], "nothing": ["null", null]
	},
	"broker": {"contentType": "application/json", "correlationId": "corr", "subject": "subj", "to": "someone",
		"replyTo": "replies", "replyToSessionId": "rsid", "timeToLive": 60000, "expiresMinusEnqueued": 60000},
	"bodyTypes": ["data", "data", "data", "value", "sequence"]
}`)
	// The copy left in the queue, as the engine stored it: rhea picks the
	// narrowest AMQP type for each JavaScript number.
	msgs, err := env.eng.Browse(testCtx(t, 5*time.Second), broker.BrowseRequest{Entity: "props", Category: broker.CategoryActive, Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].MessageID != "kept" || string(msgs[0].Body) != `"kept"` || msgs[0].BodyKind != broker.BodyData {
		t.Fatalf("stored: %+v", msgs)
	}
	typed := map[string]string{}
	for k, v := range msgs[0].ApplicationProperties {
		typed[k] = fmt.Sprintf("%T(%v)", v, v)
	}
	want := map[string]string{
		"str": "string(text)", "zero": "int32(0)", "small": "uint32(42)", "uint": "uint32(300000)",
		"big": "uint64(5000000000)", "neg": "int32(-7)", "bigneg": "int64(-5000000000)", "frac": "float64(1.5)",
		"yes": "bool(true)", "no": "bool(false)", "when": "time.Time(2024-01-02 03:04:05.678 +0000 UTC)", "nothing": "<nil>(<nil>)",
	}
	if fmt.Sprint(typed) != fmt.Sprint(want) {
		t.Errorf("stored application properties:\n got %v\nwant %v", typed, want)
	}
}

func TestJSSDKSessions(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("sq", broker.EntitySettings{RequiresSession: true})
	got := runNode(t, env, "sessions.mjs", "sq")
	checkJSON(t, got, `{
	"sendWithoutSession": "GeneralError",
	"sessionId": "a",
	"a": [
		{"body": "a1", "bodyType": "string", "messageId": "a1", "sequenceNumber": 1, "deliveryCount": 0, "state": "active", "sessionId": "a"},
		{"body": "a2", "bodyType": "string", "messageId": "a2", "sequenceNumber": 3, "deliveryCount": 0, "state": "active", "sessionId": "a"}
	],
	"initialState": null,
	"state": "state of a",
	"jsonState": {"step": 2},
	"renewLater": true,
	"secondAccept": "SessionCannotBeLocked",
	"nextSessionId": "b",
	"b": [{"body": "b1", "bodyType": "string", "messageId": "b1", "sequenceNumber": 2, "deliveryCount": 0, "state": "active", "sessionId": "b"}],
	"stateAfterReopen": {"step": 2},
	"emptyReceive": 0
}`)
}

func TestJSSDKTopicAndSubscriptions(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.create(redTopic()...)
	got := runNode(t, env, "topics.mjs", "t", "all", "red")
	checkJSON(t, got, `{
	"all": ["r1@1:red", "b1@2:blue", "r2@3:red"], "allLeft": [],
	"red": ["r1@1:red", "r2@3:red"], "redLeft": []
}`)
}

// TestJSSDKRuleManager: ServiceBusRuleManager (createRule, deleteRule,
// getRules, listRules) over the subscription's $management node.
func TestJSSDKRuleManager(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.create(redTopic()...)
	got := runNode(t, env, "rules.mjs", "t", "all")
	checkJSON(t, got, `{
	"initial": [{"name": "$Default", "filter": {"sqlExpression": "1=1"}, "action": null}],
	"afterCreate": [
		{"name": "$Default", "filter": {"sqlExpression": "1=1"}, "action": null},
		{"name": "blue", "filter": {"sqlExpression": "color = 'blue'"}, "action": "SET seen = 'yes'"},
		{"name": "corr", "filter": {"subject": "red", "contentType": "text/plain", "applicationProperties": {"n": 5, "tenant": "acme"}}, "action": null}
	],
	"pages": [["$Default", "blue"], ["corr"]],
	"duplicate": "MessagingEntityAlreadyExists",
	"badSQL": {"position": true, "tracking": true},
	"received": ["b:yes", "r:-"],
	"unknown": "MessagingEntityNotFound",
	"finally": [],
	"receivedAfterAll": 0
}`)
}

func TestJSSDKRefusals(t *testing.T) {
	env := newEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	got := runNode(t, env, "errors.mjs", "q", "missing")
	unauthorized := `{"name": "ServiceBusError", "code": "UnauthorizedAccess"}`
	notFound := `{"name": "ServiceBusError", "code": "MessagingEntityNotFound"}`
	checkJSON(t, got, `{
	"wrongKeySend": `+unauthorized+`, "wrongKeyReceive": `+unauthorized+`, "wrongKeyPeek": `+unauthorized+`,
	"missingSend": `+notFound+`, "missingReceive": `+notFound+`, "missingPeek": `+notFound+`,
	"goodAfterwards": "ok"
}`)
	if got := env.activeBodies("q"); len(got) != 1 || got[0] != `"fine"` {
		t.Errorf("queue holds %q, want only the good send", got)
	}
}

// TestJSSDKAdministrationClient: ServiceBusAdministrationClient against the
// admin API, unchanged. It always builds https://HOST:PORT/ URLs from the
// connection string, whatever else the string says: the listener's port
// answers HTTPS, trusted through NODE_EXTRA_CA_CERTS.
func TestJSSDKAdministrationClient(t *testing.T) {
	env := newFrontEnv(t, engine.Options{}, Options{})
	adminConn := "PEEKLOCK_ADMIN_CONNECTION_STRING=" + env.emulatorConnString()
	got := runNodeEnv(t, env.testEnv, []string{adminConn, "NODE_EXTRA_CA_CERTS=" + env.caPath}, "admin.mjs")
	checkJSON(t, got, `{
	"created": {"name": "aq", "lockDuration": "PT45S", "maxDeliveryCount": 3},
	"exists": [true, false],
	"runtime": {"active": 2, "scheduled": 1, "deadLetter": 0, "total": 3},
	"queues": ["aq"],
	"subscriptions": ["s1"],
	"updated": 7,
	"afterDelete": {"code": "MessageEntityNotFoundError", "statusCode": 404}
}`)
	if _, err := env.eng.Entity(testCtx(t, 5*time.Second), "at/Subscriptions/s1"); err != nil {
		t.Errorf("the subscription the SDK created: %v", err)
	}
}
