package engine

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/emulatorconfig"
	"github.com/peeklock/peeklock/broker/engine/store"
)

const statusConfig = `{"UserConfig": {"Namespaces": [{"Name": "ns",
  "Queues": [{"Name": "q", "Properties": {"Status": "receivedisabled", "AutoDeleteOnIdle": "PT1H",
    "EnablePartitioning": true, "EnableBatchedOperations": false}}],
  "Topics": [{"Name": "t", "Properties": {"Status": "SendDisabled", "EnablePartitioning": true},
    "Subscriptions": [{"Name": "s", "Properties": {"Status": "Disabled", "AutoDeleteOnIdle": "PT5M"}}]}]}]}}`

// TestConfigStatusAndAutoDelete: a Config.json takes Status,
// AutoDeleteOnIdle, EnablePartitioning and EnableBatchedOperations.
func TestConfigStatusAndAutoDelete(t *testing.T) {
	cfg, err := emulatorconfig.Parse([]byte(statusConfig))
	if err != nil {
		t.Fatal(err)
	}
	q, topic, sub := cfg.Entities[0].Settings, cfg.Entities[1].Settings, cfg.Entities[2].Settings
	if q.Status != broker.StatusReceiveDisabled || q.AutoDeleteOnIdle != time.Hour || !q.EnablePartitioning || !q.DisableBatchedOperations {
		t.Fatalf("queue settings = %+v", q)
	}
	if topic.Status != broker.StatusSendDisabled || !topic.EnablePartitioning || topic.DisableBatchedOperations || topic.AutoDeleteOnIdle != 0 {
		t.Fatalf("topic settings = %+v", topic)
	}
	if sub.Status != broker.StatusDisabled || sub.AutoDeleteOnIdle != 5*time.Minute {
		t.Fatalf("subscription settings = %+v", sub)
	}
	f := newFixture(t, store.NewMemory())
	if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
		t.Fatal(err)
	}
	ent, _ := f.e.Entity(f.ctx, "t/Subscriptions/s")
	if !ent.Settings.EnablePartitioning || ent.Settings.Status != broker.StatusDisabled {
		t.Fatalf("subscription = %+v", ent.Settings)
	}
	wantDisabled(t, f.e.Send(f.ctx, "t", []*broker.Message{msg("x")}), "t", " for Send operations")

	for _, c := range []struct{ json, want string }{
		{strings.Replace(statusConfig, `"receivedisabled"`, `"Paused"`, 1),
			`Queues[0].Properties.Status is "Paused"; it must be Active, Disabled, SendDisabled or ReceiveDisabled`},
		{strings.Replace(statusConfig, `"PT1H"`, `"PT4M"`, 1), "Queues[0].Properties.AutoDeleteOnIdle is PT4M; at least PT5M is allowed"},
		{strings.Replace(statusConfig, `"EnableBatchedOperations": false`, `"EnableBatchedOperations": "no"`, 1),
			"Queues[0].Properties.EnableBatchedOperations must be true or false"},
		{strings.Replace(statusConfig, `"Status": "Disabled"`, `"EnablePartitioning": true`, 1),
			"Subscriptions[0].Properties.EnablePartitioning is not a known property here"},
	} {
		_, err := emulatorconfig.Parse([]byte(c.json))
		if be := wantCode(t, err, broker.CodeInvalid); !strings.Contains(be.Message, c.want) {
			t.Errorf("got %q, want it to contain %q", be.Message, c.want)
		}
	}
}

// TestApplyConfigKeepsAdminOnlySettings: applying a configuration again
// keeps what only the admin API sets (authorization rules, a forwarding URI
// for the configured target) and changes nothing else; partitioning cannot
// change.
func TestApplyConfigKeepsAdminOnlySettings(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	cfg, err := emulatorconfig.Parse([]byte(emulatorConfig))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
		t.Fatal(err)
	}
	const sub = "topic.1/Subscriptions/subscription.2"
	ent, _ := f.e.Entity(f.ctx, sub)
	ent.AuthorizationRules = testAuthRules
	ent.Settings.ForwardToURI = "https://ns.example/queue.1"
	if err := f.e.UpdateEntity(f.ctx, ent); err != nil {
		t.Fatal(err)
	}
	f.advance(time.Minute)
	if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
		t.Fatal(err)
	}
	got, _ := f.e.Entity(f.ctx, sub)
	if !got.UpdatedAt.Equal(ent.UpdatedAt) || got.Settings.ForwardToURI != "https://ns.example/queue.1" || !reflect.DeepEqual(got.AuthorizationRules, testAuthRules) {
		t.Fatalf("after ApplyConfig again: updated %v (was %v), %+v, %+v", got.UpdatedAt, ent.UpdatedAt, got.Settings, got.AuthorizationRules)
	}
	part := strings.Replace(emulatorConfig, `"RequiresSession": false
            }`, `"RequiresSession": false, "EnablePartitioning": true
            }`, 1)
	if cfg2, err := emulatorconfig.Parse([]byte(part)); err == nil {
		be := wantCode(t, f.e.ApplyConfig(f.ctx, cfg2.Entities), broker.CodeInvalid)
		if !strings.Contains(be.Message, "EnablePartitioning cannot change on an existing entity") {
			t.Fatalf("message = %q", be.Message)
		}
	} else {
		t.Fatalf("parse: %v", err)
	}
}
