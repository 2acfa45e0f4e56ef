package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// sqlTopic creates topic "st" with subscriptions that use SQL filters and
// actions.
func sqlTopic(t *testing.T, f *fixture) {
	t.Helper()
	subs := map[string][]broker.Rule{
		"big": {{Name: "big", SQL: "quantity * price > 100 AND sys.Label IN ('order', 'refund')"}},
		"eu":  {{Name: "eu", SQL: "region LIKE 'eu-%' OR NOT EXISTS(region)"}},
		// Two matching rules without actions: one copy.
		"either": {{Name: "a", SQL: "quantity > 1"}, {Name: "b", SQL: "quantity > 2"}},
		// One plain rule and two action rules: up to three copies.
		"actions": {
			{Name: "plain", SQL: "quantity > 0"},
			{Name: "tag", SQL: "quantity > 5", Action: "SET tier = 'gold', SET quantity = quantity + 1000; SET sys.Label = 'tagged'"},
			{Name: "strip", Filter: &broker.CorrelationFilter{Subject: "order"}, Action: "REMOVE secret"},
		},
		"none": {{Name: "false", SQL: "1=0"}},
	}
	if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "st", Kind: broker.KindTopic}); err != nil {
		t.Fatal(err)
	}
	for name, rules := range subs {
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "st/Subscriptions/" + name, Kind: broker.KindSubscription, Rules: rules}); err != nil {
			t.Fatal(err)
		}
	}
}

func sqlMessage(id, label string, quantity int32, price float64, region string) *broker.Message {
	m := &broker.Message{MessageID: id, Subject: label, ApplicationProperties: map[string]any{
		"quantity": quantity, "price": price, "secret": "s3cret",
	}}
	if region != "" {
		m.ApplicationProperties["region"] = region
	}
	return m
}

func TestTopicFanOutWithSQLRules(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		sqlTopic(t, f)
		m1 := sqlMessage("m1", "order", 10, 20, "eu-west")  // big, eu, either, actions x3
		m2 := sqlMessage("m2", "refund", 1, 500, "us-east") // big, actions (plain)
		m3 := sqlMessage("m3", "order", 3, 1, "")           // eu (no region), either, actions (plain, strip)
		f.send("st", m1, m2, m3)

		check := func(f *fixture) {
			t.Helper()
			want := map[string][]string{
				"big":     {"m1", "m2"},
				"eu":      {"m1", "m3"},
				"either":  {"m1", "m3"},
				"actions": {"m1", "m1", "m1", "m2", "m3", "m3"},
				"none":    nil,
			}
			for name, ids := range want {
				got := f.browse("st/Subscriptions/"+name, broker.CategoryActive)
				if !slices.Equal(idsOf(got), ids) {
					t.Errorf("%s: %v, want %v", name, idsOf(got), ids)
				}
			}
			got := f.browse("st/Subscriptions/actions", broker.CategoryActive)
			if len(got) != 6 {
				return
			}
			// m1 has the topic's number 1 and the block 1..3 (three copies),
			// m2 number 4, m3 number 5 and the block 5..6.
			if seqs := seqsOf(got); !slices.Equal(seqs, []int64{1, 2, 3, 4, 5, 6}) {
				t.Errorf("actions seqs = %v", seqs)
			}
			plain, tag, strip := got[0], got[1], got[2]
			if len(plain.ApplicationProperties) != 4 || plain.ApplicationProperties["quantity"] != int32(10) || plain.Subject != "order" {
				t.Errorf("plain copy = %+v", plain)
			}
			if p := tag.ApplicationProperties; p["tier"] != "gold" || p["quantity"] != int64(1010) || p["RuleName"] != "tag" || p["secret"] != "s3cret" || tag.Subject != "tagged" {
				t.Errorf("tag copy = %+v %v", tag, p)
			}
			if p := strip.ApplicationProperties; p["RuleName"] != "strip" || len(p) != 4 || p["quantity"] != int32(10) {
				t.Errorf("strip copy props = %v", p)
			}
			if _, ok := strip.ApplicationProperties["secret"]; ok {
				t.Errorf("strip copy kept secret")
			}
			if got[4].ApplicationProperties["RuleName"] != nil || got[5].ApplicationProperties["RuleName"] != "strip" {
				t.Errorf("m3 copies = %v / %v", got[4].ApplicationProperties, got[5].ApplicationProperties)
			}
		}
		check(f)
		// The sender's message is untouched.
		if m1.Subject != "order" || len(m1.ApplicationProperties) != 4 || m1.ApplicationProperties["secret"] != "s3cret" {
			t.Fatalf("the sent message changed: %+v", m1)
		}
		// Copies are separate messages: completing one leaves the others.
		r := f.receiveOne("st/Subscriptions/actions")
		f.mustSettle(broker.Complete, "st/Subscriptions/actions", r)
		f.wantCounts("st/Subscriptions/actions", broker.Counts{Active: 5})

		// After a restart the rules still apply, compiled again.
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		ent, err := g.e.Entity(g.ctx, "st/Subscriptions/actions")
		if err != nil || len(ent.Rules) != 3 || ent.Rules[1].Action == "" || ent.Rules[0].SQL != "quantity > 0" {
			t.Fatalf("rules after restart: %+v %v", ent.Rules, err)
		}
		g.send("st", sqlMessage("m4", "order", 6, 1, "eu-north"))
		if got := idsOf(g.browse("st/Subscriptions/eu", broker.CategoryActive)); !slices.Equal(got, []string{"m1", "m3", "m4"}) {
			t.Fatalf("eu after restart = %v", got)
		}
		got := g.browse("st/Subscriptions/actions", broker.CategoryActive)
		// m4 (quantity 6, order): plain, tag and strip, numbered 7, 8, 9.
		if ids := idsOf(got); !slices.Equal(ids, []string{"m1", "m1", "m2", "m3", "m3", "m4", "m4", "m4"}) ||
			!slices.Equal(seqsOf(got)[5:], []int64{7, 8, 9}) ||
			got[6].ApplicationProperties["tier"] != "gold" || got[7].ApplicationProperties["RuleName"] != "strip" {
			t.Fatalf("actions after restart = %v %v", ids, seqsOf(got))
		}
	})
}

// TestSQLRuleSessionCheckSeesAction: a rule action that clears SessionId on
// a session subscription's copy makes the send fail, as a message without
// one would.
func TestSQLRuleSessionCheckSeesAction(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}); err != nil {
		t.Fatal(err)
	}
	if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription,
		Settings: broker.EntitySettings{RequiresSession: true},
		Rules:    []broker.Rule{{Name: "r", SQL: "1=1", Action: "REMOVE sys.SessionId"}}}); err != nil {
		t.Fatal(err)
	}
	err := f.e.Send(f.ctx, "t", []*broker.Message{{MessageID: "x", SessionID: "a"}})
	be := wantCode(t, err, broker.CodeInvalid)
	if want := `message 0 has no SessionId but subscription "t/Subscriptions/s" requires sessions`; be.Message != want {
		t.Fatalf("message = %q", be.Message)
	}
}

// TestSQLRuleParameters: a rule's filter and action parameters decide and
// change the copies, are kept as given (int as int64) and not shared with
// the caller, and survive a restart.
func TestSQLRuleParameters(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "pt", Kind: broker.KindTopic}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		params := map[string]any{"@min": 5, "@region": "eu-%", "@until": deadline, "@unused": true}
		actionParams := map[string]any{"@tier": "gold", "@factor": 2.5, "@ttl": 90 * time.Second, "@due": deadline}
		rules := []broker.Rule{{Name: "p", SQL: "quantity >= @MIN AND region LIKE @region",
			Parameters: params, Action: "SET tier = @tier, SET score = quantity * @factor, SET hold = @ttl, SET due = @due", ActionParameters: actionParams}}
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "pt/Subscriptions/s", Kind: broker.KindSubscription, Rules: rules}); err != nil {
			t.Fatal(err)
		}
		// The caller's maps are not the engine's.
		params["@min"], actionParams["@tier"] = 100, "lead"
		wantRule := broker.Rule{Name: "p", SQL: rules[0].SQL, Action: rules[0].Action, CreatedAt: t0,
			Parameters:       map[string]any{"@min": int64(5), "@region": "eu-%", "@until": deadline, "@unused": true},
			ActionParameters: map[string]any{"@tier": "gold", "@factor": 2.5, "@ttl": 90 * time.Second, "@due": deadline}}
		check := func(f *fixture, ids ...string) {
			t.Helper()
			ent, err := f.e.Entity(f.ctx, "pt/Subscriptions/s")
			if err != nil || len(ent.Rules) != 1 || !reflect.DeepEqual(ent.Rules[0], wantRule) {
				t.Fatalf("rules = %#v, %v\nwant %#v", ent.Rules, err, wantRule)
			}
			got := f.browse("pt/Subscriptions/s", broker.CategoryActive)
			if !slices.Equal(idsOf(got), ids) {
				t.Fatalf("copies %v, want %v", idsOf(got), ids)
			}
			for _, m := range got {
				p := m.ApplicationProperties
				if p["tier"] != "gold" || p["score"] != float64(p["quantity"].(int32))*2.5 || p["hold"] != 90*time.Second || p["due"] != deadline || p["RuleName"] != "p" {
					t.Fatalf("copy %s: %v", m.MessageID, p)
				}
			}
		}
		f.send("pt", sqlMessage("small", "order", 4, 1, "eu-west"), sqlMessage("big", "order", 6, 1, "eu-west"),
			sqlMessage("us", "order", 9, 1, "us-east"), sqlMessage("five", "order", 5, 1, "eu-north"))
		check(f, "big", "five")

		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		g.send("pt", sqlMessage("after", "order", 7, 1, "eu-south"), sqlMessage("after-small", "order", 1, 1, "eu-south"))
		check(g, "big", "five", "after")
	})
}
