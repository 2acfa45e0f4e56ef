package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/emulatorconfig"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// emulatorConfig is shaped like the Service Bus emulator's sample Config.json.
const emulatorConfig = `{
  "UserConfig": {
    "Namespaces": [
      {
        "Name": "sbemulatorns",
        "Queues": [
          {
            "Name": "queue.1",
            "Properties": {
              "DeadLetteringOnMessageExpiration": false,
              "DefaultMessageTimeToLive": "PT1H",
              "DuplicateDetectionHistoryTimeWindow": "PT20S",
              "ForwardDeadLetteredMessagesTo": "",
              "ForwardTo": "",
              "LockDuration": "PT1M",
              "MaxDeliveryCount": 3,
              "RequiresDuplicateDetection": false,
              "RequiresSession": false
            }
          },
          {"Name": "queue.defaults"}
        ],
        "Topics": [
          {
            "Name": "topic.1",
            "Properties": {
              "DefaultMessageTimeToLive": "PT1H",
              "DuplicateDetectionHistoryTimeWindow": "PT20S",
              "RequiresDuplicateDetection": false
            },
            "Subscriptions": [
              {
                "Name": "subscription.1",
                "Properties": {
                  "DeadLetteringOnMessageExpiration": false,
                  "DefaultMessageTimeToLive": "PT1H",
                  "LockDuration": "PT1M",
                  "MaxDeliveryCount": 3,
                  "ForwardDeadLetteredMessagesTo": "",
                  "ForwardTo": "",
                  "RequiresSession": false
                },
                "Rules": [
                  {
                    "Name": "app-prop-filter-1",
                    "Properties": {
                      "FilterType": "Correlation",
                      "CorrelationFilter": {
                        "ContentType": "application/text",
                        "CorrelationId": "id1",
                        "Label": "subject1",
                        "MessageId": "msgid1",
                        "ReplyTo": "someQueue",
                        "ReplyToSessionId": "sessionId",
                        "SessionId": "session1",
                        "To": "xyz",
                        "Properties": {"prop1": "value1", "n": 5}
                      }
                    }
                  }
                ]
              },
              {"Name": "subscription.2", "Properties": {"ForwardTo": "queue.1", "LockDuration": "PT30S"}}
            ]
          }
        ]
      }
    ],
    "Logging": {"Type": "File"}
  }
}`

func TestParseConfig(t *testing.T) {
	cfg, err := emulatorconfig.Parse([]byte(emulatorConfig))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Namespace != "sbemulatorns" || cfg.Logging != "File" || len(cfg.Entities) != 5 {
		t.Fatalf("config = %q %q %d entities", cfg.Namespace, cfg.Logging, len(cfg.Entities))
	}
	q := cfg.Entities[0]
	want := broker.EntitySettings{LockDuration: time.Minute, MaxDeliveryCount: 3, DefaultMessageTimeToLive: time.Hour,
		DuplicateDetectionHistoryTimeWindow: 20 * time.Second, MaxSizeInMegabytes: 1024, MaxMessageSizeInKilobytes: 256}
	if q.Path != "queue.1" || q.Kind != broker.KindQueue || q.Settings != want {
		t.Fatalf("queue.1 = %+v", q)
	}
	if d := cfg.Entities[1]; d.Settings != want {
		t.Fatalf("queue with emulator defaults = %+v, want %+v", d.Settings, want)
	}
	sub := cfg.Entities[3]
	if sub.Path != "topic.1/Subscriptions/subscription.1" || sub.Kind != broker.KindSubscription || len(sub.Rules) != 1 {
		t.Fatalf("subscription = %+v", sub)
	}
	f := sub.Rules[0].Filter
	if sub.Rules[0].Name != "app-prop-filter-1" || f.Subject != "subject1" || f.CorrelationID != "id1" || f.ReplyToSessionID != "sessionId" ||
		f.To != "xyz" || f.Properties["prop1"] != "value1" || f.Properties["n"] != int64(5) {
		t.Fatalf("rule = %+v %+v", sub.Rules[0], f)
	}
	if s2 := cfg.Entities[4]; s2.Settings.ForwardTo != "queue.1" || s2.Settings.LockDuration != 30*time.Second {
		t.Fatalf("subscription.2 = %+v", s2.Settings)
	}
}

// parseAndCheck reads a Config.json as the command line does before it
// opens anything: the file's form, then the definitions.
func parseAndCheck(data []byte) (*emulatorconfig.Config, error) {
	cfg, err := emulatorconfig.Parse(data)
	if err != nil {
		return nil, err
	}
	return cfg, CheckEntities(cfg.Entities)
}

func TestParseConfigErrorsNameThePath(t *testing.T) {
	cases := []struct {
		json, want string
		code       broker.Code
	}{
		{`{`, "is not valid JSON at line 1, column 2: parsing value: unexpected EOF", broker.CodeInvalid},
		{"{\n  \"UserConfig\": x}", "is not valid JSON at line 2, column 17: invalid literal: x", broker.CodeInvalid},
		{`[]`, "must be a JSON object", broker.CodeInvalid},
		{`{}`, "UserConfig is required", broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[]}}`, "UserConfig.Namespaces must hold exactly one namespace, not 0", broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"q","Properties":{"LockDuration":"1 minute"}}]}]}}`,
			`UserConfig.Namespaces[0].Queues[0].Properties.LockDuration is invalid: "1 minute" is not an ISO 8601 duration`, broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"q","Properties":{"LockDurration":"PT1M"}}]}]}}`,
			"UserConfig.Namespaces[0].Queues[0].Properties.LockDurration is not a known property here", broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"q","Properties":{"MaxDeliveryCount":0}}]}]}}`,
			"Properties.MaxDeliveryCount is 0; it must be between 1 and", broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"q","Properties":{"MaxDeliveryCount":"3"}}]}]}}`,
			"Properties.MaxDeliveryCount must be a number, not a string", broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"q","Properties":{"LockDuration":"PT10M"}}]}]}}`,
			"LockDuration is PT10M; at most PT5M is allowed", broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Properties":{}}]}]}}`,
			"UserConfig.Namespaces[0].Queues[0].Name is required", broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"q"},{"Name":"Q"}]}]}}`,
			`defines "Q" twice`, broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"bad name"}]}]}}`,
			`configuration queue "bad name": the queue name "bad name" is not valid`, broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Topics":[{"Name":"t","Properties":{"LockDuration":"PT1M"}}]}]}}`,
			"Topics[0].Properties.LockDuration is not a known property here", broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Topics":[{"Name":"t","Subscriptions":[{"Name":"s","Rules":[{"Name":"r","Properties":{"FilterType":"Sql","SqlFilter":{"SqlExpression":"a=="}}}]}]}]}]}}`,
			`Topics[0].Subscriptions[0].Rules[0].Properties.SqlFilter.SqlExpression: SQL filter "a==": at position 3: expected a value, found "="`, broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Topics":[{"Name":"t","Subscriptions":[{"Name":"s","Rules":[{"Name":"r","Properties":{"FilterType":"Sql","SqlFilter":{"SqlExpression":"a=1"},"Action":{"SqlExpression":"SET"}}}]}]}]}]}}`,
			`Topics[0].Subscriptions[0].Rules[0].Properties.Action.SqlExpression: SQL action "SET": at position 4: expected a property name, found the end of the expression`, broker.CodeInvalid},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Topics":[{"Name":"t","Subscriptions":[{"Name":"s","Rules":[{"Name":"r","Properties":{"FilterType":"Correlation"}}]}]}]}]}}`,
			"Rules[0].Properties.CorrelationFilter is required when FilterType is Correlation", broker.CodeInvalid},
	}
	for _, c := range cases {
		_, err := parseAndCheck([]byte(c.json))
		be := wantCode(t, err, c.code)
		if !strings.Contains(be.Message, c.want) {
			t.Errorf("emulatorconfig.Parse(%s):\n got %q\nwant it to contain %q", c.json, be.Message, c.want)
		}
	}
}

func TestApplyConfig(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		cfg, err := emulatorconfig.Parse([]byte(emulatorConfig))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
			t.Fatal(err)
		}
		ents, _ := f.e.Entities(f.ctx)
		var paths []string
		for _, e := range ents {
			paths = append(paths, e.Path)
		}
		if got := strings.Join(paths, ","); got != "queue.1,queue.defaults,topic.1,topic.1/Subscriptions/subscription.1,topic.1/Subscriptions/subscription.2" {
			t.Fatalf("entities = %s", got)
		}
		// The filter works, and subscription.2 forwards to queue.1.
		m := &broker.Message{MessageID: "msgid1", ContentType: "application/text", CorrelationID: "id1", Subject: "subject1",
			ReplyTo: "someQueue", ReplyToSessionID: "sessionId", SessionID: "session1", To: "xyz",
			ApplicationProperties: map[string]any{"prop1": "value1", "n": int32(5)}}
		f.send("topic.1", m, msg("other"))
		f.wantCounts("topic.1/Subscriptions/subscription.1", broker.Counts{Active: 1})
		f.wantCounts("queue.1", broker.Counts{Active: 2})
		// Holding a lock, apply again unchanged: nothing is updated.
		locked := f.receiveOne("queue.1")
		if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
			t.Fatal(err)
		}
		f.mustSettle(broker.Abandon, "queue.1", locked)
		// Change one setting: that entity is updated (its locks lost), others kept.
		locked = f.receiveOne("queue.1")
		cfg2, _ := emulatorconfig.Parse([]byte(strings.Replace(emulatorConfig, `"MaxDeliveryCount": 3,
              "RequiresDuplicateDetection"`, `"MaxDeliveryCount": 7,
              "RequiresDuplicateDetection"`, 1)))
		if cfg2.Entities[0].Settings.MaxDeliveryCount != 7 {
			t.Fatal("test config edit failed")
		}
		if err := f.e.ApplyConfig(f.ctx, cfg2.Entities); err != nil {
			t.Fatal(err)
		}
		wantCode(t, f.settle(broker.Complete, "queue.1", locked), broker.CodeLockLost)
		ent, _ := f.e.Entity(f.ctx, "queue.1")
		if ent.Settings.MaxDeliveryCount != 7 {
			t.Fatalf("updated MaxDeliveryCount = %d", ent.Settings.MaxDeliveryCount)
		}
	})
}

func TestApplyConfigValidatesFirst(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("existing", broker.EntitySettings{RequiresSession: true})
	bad := []struct {
		cfg  string
		want string
	}{
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"a"},{"Name":"b","Properties":{"ForwardTo":"missing"}}]}]}}`,
			`ForwardTo names "missing", which is not defined`},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"a"},{"Name":"existing"}]}]}}`,
			"RequiresSession cannot change"},
	}
	for _, c := range bad {
		cfg, err := emulatorconfig.Parse([]byte(c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		err = f.e.ApplyConfig(f.ctx, cfg.Entities)
		be := wantCode(t, err, broker.CodeInvalid)
		if !strings.Contains(be.Message, c.want) {
			t.Fatalf("ApplyConfig: %q, want %q", be.Message, c.want)
		}
		if _, err := f.e.Entity(f.ctx, "a"); err == nil {
			t.Fatal("an invalid configuration must apply nothing")
		}
	}
	// A forward to an existing entity is fine.
	cfg, _ := emulatorconfig.Parse([]byte(`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"fw","Properties":{"ForwardTo":"existing"}}]}]}}`))
	if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
		t.Fatal(err)
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "Config.json")
	os.WriteFile(p, []byte(emulatorConfig), 0o600)
	cfg, err := emulatorconfig.LoadFile(p)
	if err != nil || len(cfg.Entities) != 5 {
		t.Fatalf("LoadConfigFile = %v, %v", cfg, err)
	}
	_, err = emulatorconfig.LoadFile(filepath.Join(dir, "missing.json"))
	wantCode(t, err, broker.CodeInvalid)
	os.WriteFile(p, []byte(`{"UserConfig":{}}`), 0o600)
	_, err = emulatorconfig.LoadFile(p)
	be := wantCode(t, err, broker.CodeInvalid)
	if !strings.HasPrefix(be.Message, p+": ") {
		t.Fatalf("message %q does not name the file", be.Message)
	}
}

// A configured subscription without rules has the $Default TrueFilter:
// applying the configuration again changes nothing, and brings $Default back
// when it was removed meanwhile.
func TestApplyConfigSubscriptionWithoutRules(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		cfg, err := emulatorconfig.Parse([]byte(`{"UserConfig": {"Namespaces": [{"Name": "n",
			"Topics": [{"Name": "t", "Subscriptions": [{"Name": "s"}]}]}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
			t.Fatal(err)
		}
		const sub = "t/Subscriptions/s"
		f.advance(time.Minute)
		if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
			t.Fatal(err)
		}
		ent := f.wantTimes(sub, t0, t0, t0) // a new subscription counts as accessed, as on Service Bus
		if len(ent.Rules) != 1 || ent.Rules[0].Name != broker.DefaultRuleName || !ent.Rules[0].CreatedAt.Equal(t0) {
			t.Fatalf("rules after applying twice: %+v", ent.Rules)
		}
		if err := f.e.RemoveRule(f.ctx, sub, broker.DefaultRuleName); err != nil {
			t.Fatal(err)
		}
		f.advance(time.Minute)
		if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
			t.Fatal(err)
		}
		ent = f.wantTimes(sub, t0, t0.Add(2*time.Minute), t0)
		if len(ent.Rules) != 1 || ent.Rules[0].Name != broker.DefaultRuleName {
			t.Fatalf("rules after applying to a subscription without rules: %+v", ent.Rules)
		}
		f.send("t", msg("a"))
		f.wantCounts(sub, broker.Counts{Active: 1})
	})
}
