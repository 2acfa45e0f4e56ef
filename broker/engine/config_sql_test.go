package engine

import (
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/emulatorconfig"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// emulatorSQLConfig has the SQL rule of the Service Bus emulator's sample
// Config.json: a SQL filter on a system and an application property, and
// an action that sets sys.To.
const emulatorSQLConfig = `{
  "UserConfig": {
    "Namespaces": [{
      "Name": "sbemulatorns",
      "Topics": [{
        "Name": "topic.1",
        "Subscriptions": [{
          "Name": "subscription.3",
          "Properties": {"MaxDeliveryCount": 3, "LockDuration": "PT1M"},
          "Rules": [{
            "Name": "sql-filter-1",
            "Properties": {
              "FilterType": "Sql",
              "SqlFilter": {"SqlExpression": "sys.MessageId = '123456' AND userProp1 = 'value1'"},
              "Action": {"SqlExpression": "SET sys.To = 'Entity'"}
            }
          }]
        }, {
          "Name": "subscription.4",
          "Rules": [{
            "Name": "corr-with-action",
            "Properties": {
              "FilterType": "Correlation",
              "CorrelationFilter": {"Label": "subject1"},
              "Action": {"SqlExpression": "SET seen = TRUE"}
            }
          }]
        }]
      }]
    }],
    "Logging": {"Type": "File"}
  }
}`

func TestConfigWithEmulatorSQLRules(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		cfg, err := emulatorconfig.Parse([]byte(emulatorSQLConfig))
		if err != nil {
			t.Fatal(err)
		}
		sub := cfg.Entities[1]
		if r := sub.Rules[0]; r.Name != "sql-filter-1" || r.SQL != "sys.MessageId = '123456' AND userProp1 = 'value1'" ||
			r.Action != "SET sys.To = 'Entity'" || r.Filter != nil {
			t.Fatalf("rule = %+v", r)
		}
		if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
			t.Fatal(err)
		}
		f.send("topic.1",
			&broker.Message{MessageID: "123456", Subject: "subject1", ApplicationProperties: map[string]any{"userProp1": "value1"}},
			&broker.Message{MessageID: "123456", ApplicationProperties: map[string]any{"userProp1": "value2"}},
			&broker.Message{MessageID: "other", ApplicationProperties: map[string]any{"userProp1": "value1"}},
		)
		got := f.browse("topic.1/Subscriptions/subscription.3", broker.CategoryActive)
		if len(got) != 1 || got[0].MessageID != "123456" || got[0].To != "Entity" || got[0].ApplicationProperties["RuleName"] != "sql-filter-1" {
			t.Fatalf("subscription.3 = %+v", got)
		}
		got = f.browse("topic.1/Subscriptions/subscription.4", broker.CategoryActive)
		if len(got) != 1 || got[0].ApplicationProperties["seen"] != true || got[0].To != "" {
			t.Fatalf("subscription.4 = %+v", got)
		}
		// Applying the same configuration again changes nothing.
		if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
			t.Fatal(err)
		}
		f.wantCounts("topic.1/Subscriptions/subscription.3", broker.Counts{Active: 1})
	})
}
