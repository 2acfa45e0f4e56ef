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

// The emulator's default Config.json, with its // comments (one of them
// right before the closing brace of an object), loads unchanged and makes
// the entities the emulator makes of it: subscription.3 has no rules and
// gets the $Default TrueFilter.
func TestEmulatorDefaultConfigLoads(t *testing.T) {
	cfg, err := emulatorconfig.LoadFile("testdata/emulator-default-config.json")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, ent := range cfg.Entities {
		paths = append(paths, ent.Path)
	}
	want := "queue.1,topic.1,topic.1/Subscriptions/subscription.1,topic.1/Subscriptions/subscription.2,topic.1/Subscriptions/subscription.3,topic.1/Subscriptions/subscription.4"
	if got := strings.Join(paths, ","); got != want || cfg.Namespace != "sbemulatorns" || cfg.Logging != "File" {
		t.Fatalf("entities %s, namespace %q, logging %q", got, cfg.Namespace, cfg.Logging)
	}
	if s := cfg.Entities[0].Settings; s.LockDuration != time.Minute || s.MaxDeliveryCount != 3 || s.DefaultMessageTimeToLive != time.Hour ||
		s.DuplicateDetectionHistoryTimeWindow != 20*time.Second {
		t.Errorf("queue.1 settings %+v", s)
	}
	if r := cfg.Entities[2].Rules; len(r) != 1 || r[0].Filter == nil || !reflect.DeepEqual(*r[0].Filter, broker.CorrelationFilter{ContentType: "application/json"}) {
		t.Errorf("subscription.1 rules %+v (only ContentType: the other properties are commented out)", r)
	}
	if r := cfg.Entities[4].Rules; r != nil {
		t.Errorf("subscription.3 rules %+v, want none given", r)
	}
	if r := cfg.Entities[5].Rules; len(r) != 1 || r[0].SQL != "sys.MessageId = '123456' AND userProp1 = 'value1'" || r[0].Action != "SET sys.To = 'Entity'" {
		t.Errorf("subscription.4 rules %+v", r)
	}

	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		if err := f.e.ApplyConfig(f.ctx, cfg.Entities); err != nil {
			t.Fatal(err)
		}
		ent, err := f.e.Entity(f.ctx, "topic.1/Subscriptions/subscription.3")
		if err != nil || len(ent.Rules) != 1 || ent.Rules[0].Name != broker.DefaultRuleName {
			t.Fatalf("subscription.3 rules %+v, %v; want $Default", ent.Rules, err)
		}
		m := &broker.Message{MessageID: "123456", ContentType: "application/json", ApplicationProperties: map[string]any{"prop1": "value1", "userProp1": "value1"}}
		f.send("topic.1", m)
		for i := 1; i <= 4; i++ {
			f.wantCounts("topic.1/Subscriptions/subscription."+string(rune('0'+i)), broker.Counts{Active: 1})
		}
	})
}

// Comments and trailing commas are allowed anywhere JSON allows
// whitespace; "//" inside a string is text; a syntax error reports the line
// and column of the original file, comments counted.
func TestConfigCommentsAndErrors(t *testing.T) {
	cfg, err := emulatorconfig.Parse([]byte("\ufeff" + `// first line
{
  /* a block
     comment */ "UserConfig": {
    "Namespaces": [{"Name": "sbemulatorns", "Queues": [{"Name": "q",},],},], // trailing commas
    "Logging": {"Type": "File // not a comment /* nor this */"}
  }
}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Entities) != 1 || cfg.Entities[0].Path != "q" || cfg.Logging != "File // not a comment /* nor this */" {
		t.Fatalf("config %+v", cfg)
	}

	for _, c := range []struct{ in, want string }{
		{"// comment\n{\n  \"UserConfig\": {,\n}", "the configuration is not valid JSON at line 3, column 18: invalid character ','"},
		{"{\n  /* never closed\n}", "the configuration is not valid JSON at line 2, column 3: parsing comment: unexpected EOF"},
		{"{}\n// fine\n{}", "the configuration is not valid JSON at line 3, column 1: invalid character '{' after top-level value"},
		{"{\"a\": tru}", "the configuration is not valid JSON at line 1, column 7: invalid literal: tru"},
	} {
		_, err := emulatorconfig.Parse([]byte(c.in))
		be := wantCode(t, err, broker.CodeInvalid)
		if !strings.HasPrefix(be.Message, c.want) {
			t.Errorf("emulatorconfig.Parse(%q):\n got %q\nwant %q...", c.in, be.Message, c.want)
		}
	}
	// Errors about the content keep their JSON path.
	_, err = emulatorconfig.Parse([]byte(`{"UserConfig": {"Namespaces": [{"Name": "n", // comment
		"Queues": [{"Name": "q", "Properties": {"MaxDeliveryCount": "x"}}]}]}}`))
	if be := wantCode(t, err, broker.CodeInvalid); !strings.Contains(be.Message, "Queues[0].Properties.MaxDeliveryCount") {
		t.Errorf("content error %q names no path", be.Message)
	}
}
