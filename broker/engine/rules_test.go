package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

func TestSetRulesKeepsLocksAndMessages(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := topicFixture(t, newStore())
		const red = "t/Subscriptions/red"
		m := msg("r1")
		m.ApplicationProperties = map[string]any{"color": "red"}
		f.send("t", m, &broker.Message{MessageID: "r2", ApplicationProperties: map[string]any{"color": "red"}})
		locked := f.receiveOne(red)

		f.advance(10 * time.Second)
		blue := broker.Rule{Name: "blue", Filter: &broker.CorrelationFilter{Properties: map[string]any{"color": "blue"}}}
		// "RED" replaces "red": the same name regardless of case keeps its
		// CreatedAt.
		if err := f.e.SetRules(f.ctx, red, []broker.Rule{
			{Name: "RED", Filter: &broker.CorrelationFilter{Properties: map[string]any{"color": "red"}}},
			blue,
		}); err != nil {
			t.Fatal(err)
		}
		// The lock and the other message are still there.
		f.wantCounts(red, broker.Counts{Active: 1, Locked: 1})
		f.mustSettle(broker.Complete, red, locked)
		f.wantCounts(red, broker.Counts{Active: 1})

		ent := f.wantTimes(red, t0, t0.Add(10*time.Second), t0)
		if len(ent.Rules) != 2 || ent.Rules[0].Name != "RED" || !ent.Rules[0].CreatedAt.Equal(t0) ||
			ent.Rules[1].Name != "blue" || !ent.Rules[1].CreatedAt.Equal(t0.Add(10*time.Second)) {
			t.Fatalf("rules = %+v", ent.Rules)
		}
		// The new rules decide for new messages.
		f.send("t", &broker.Message{MessageID: "b", ApplicationProperties: map[string]any{"color": "blue"}})
		f.wantCounts(red, broker.Counts{Active: 2})

		// No rules: the subscription takes nothing, and keeps what it has.
		f.advance(time.Second)
		locked = f.receiveOne(red)
		if err := f.e.SetRules(f.ctx, red, nil); err != nil {
			t.Fatal(err)
		}
		f.send("t", msg("plain"), &broker.Message{MessageID: "r3", ApplicationProperties: map[string]any{"color": "red"}})
		f.wantCounts(red, broker.Counts{Active: 1, Locked: 1})
		f.mustSettle(broker.Abandon, red, locked)
		if ent := f.wantTimes(red, t0, t0.Add(11*time.Second), t0.Add(11*time.Second)); ent.Rules == nil || len(ent.Rules) != 0 {
			t.Fatalf("rules after SetRules(nil) = %#v, want none (empty, not nil)", ent.Rules)
		}

		// The rules and their times are stored.
		if err := f.e.SetRules(f.ctx, red, []broker.Rule{blue}); err != nil {
			t.Fatal(err)
		}
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		ent = g.wantTimes(red, t0, t0.Add(11*time.Second), t0) // a subscription counts as accessed when created, also after a restart
		if len(ent.Rules) != 1 || ent.Rules[0].Name != "blue" || !ent.Rules[0].CreatedAt.Equal(t0.Add(11*time.Second)) {
			t.Fatalf("rules after restart = %+v", ent.Rules)
		}
	})
}

func TestSetRulesKeepsGivenCreatedAt(t *testing.T) {
	f := topicFixture(t, store.NewMemory())
	f.advance(time.Hour)
	at := t0.Add(-time.Hour)
	if err := f.e.SetRules(f.ctx, "t/Subscriptions/all", []broker.Rule{{Name: "$Default", CreatedAt: at}, {Name: "x", Filter: &broker.CorrelationFilter{Subject: "x"}}}); err != nil {
		t.Fatal(err)
	}
	ent, _ := f.e.Entity(f.ctx, "t/Subscriptions/all")
	if !ent.Rules[0].CreatedAt.Equal(at) || !ent.Rules[1].CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("rules = %+v", ent.Rules)
	}
}

func TestSetRulesRefuses(t *testing.T) {
	f := topicFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{})
	const red = "t/Subscriptions/red"
	cases := []struct {
		path  string
		rules []broker.Rule
		code  broker.Code
		msg   string
	}{
		{"q", nil, broker.CodeInvalid, `"q" is a queue; only subscriptions have rules`},
		{"t", nil, broker.CodeInvalid, `"t" is a topic; only subscriptions have rules`},
		{red + broker.DeadLetterSuffix, nil, broker.CodeInvalid, `a dead-letter sub-queue has no rules; set the rules of "t/Subscriptions/red"`},
		{"t/Subscriptions/none", nil, broker.CodeNotFound, ""},
		{red, []broker.Rule{{Name: "s", SQL: "a=1 AND"}}, broker.CodeInvalid, `rule "s": SQL filter "a=1 AND": at position 8: expected a value, found the end of the expression`},
		{red, []broker.Rule{{Name: "s", SQL: "a=1", Action: "SET sys.Size = 1"}}, broker.CodeInvalid, `rule "s": SQL action "SET sys.Size = 1": at position 5: SET: the system property is read-only`},
		{red, []broker.Rule{{Name: "s", SQL: "a=1", Filter: &broker.CorrelationFilter{}}}, broker.CodeInvalid, `rule "s" has both a correlation filter and a SQL filter`},
		{red, []broker.Rule{{Name: "a"}, {Name: "A"}}, broker.CodeInvalid, `two rules are named "A"`},
		{red, []broker.Rule{{}}, broker.CodeInvalid, "rule 0 has no name"},
		{red, []broker.Rule{{Name: "p", SQL: "a = @a OR b = @b", Parameters: map[string]any{"@a": 1}}}, broker.CodeInvalid,
			`rule "p": SQL filter "a = @a OR b = @b": at position 15: the parameter @b has no value; give it one in the parameters`},
		{red, []broker.Rule{{Name: "p", SQL: "a = 1", Action: "SET b = @b"}}, broker.CodeInvalid,
			`rule "p": SQL action "SET b = @b": at position 9: the parameter @b has no value; give it one in the parameters`},
		{red, []broker.Rule{{Name: "p", SQL: "a = @a", Parameters: map[string]any{"a": 1}}}, broker.CodeInvalid,
			`rule "p": SQL filter parameter "a": a parameter's name is @ followed by letters, digits and _, as in @p1`},
		{red, []broker.Rule{{Name: "p", Filter: &broker.CorrelationFilter{Subject: "x"}, Parameters: map[string]any{"@a": 1}}}, broker.CodeInvalid,
			`rule "p" has filter parameters but no SQL filter`},
		{red, []broker.Rule{{Name: "p", SQL: "1=1", ActionParameters: map[string]any{"@a": 1}}}, broker.CodeInvalid,
			`rule "p" has action parameters but no SQL action`},
	}
	for _, c := range cases {
		be := wantCode(t, f.e.SetRules(f.ctx, c.path, c.rules), c.code)
		if c.msg != "" && be.Message != c.msg {
			t.Errorf("SetRules(%s): %q, want %q", c.path, be.Message, c.msg)
		}
	}
	ent := f.wantTimes(red, t0, t0, t0)
	if len(ent.Rules) != 1 || ent.Rules[0].Name != "red" {
		t.Fatalf("rules changed by refused calls: %+v", ent.Rules)
	}
}

// TestSetRulesStoreFailureKeepsRules: a rule the durable store cannot keep
// (a filter property of an unknown type) is refused, and the subscription
// keeps its rules.
func TestSetRulesStoreFailureKeepsRules(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := topicFixture(t, newStore())
		const red = "t/Subscriptions/red"
		err := f.e.SetRules(f.ctx, red, []broker.Rule{{Name: "c", Filter: &broker.CorrelationFilter{Properties: map[string]any{"p": struct{}{}}}}})
		be := wantCode(t, err, broker.CodeInvalid)
		if want := `store the change: invalid request: rule "c" filter property "p" has unsupported type struct {}`; be.Message != want {
			t.Fatalf("message = %q, want %q", be.Message, want)
		}
		ent := f.wantTimes(red, t0, t0, t0)
		if len(ent.Rules) != 1 || ent.Rules[0].Name != "red" {
			t.Fatalf("rules = %+v", ent.Rules)
		}
	})
}

// TestUpdateEntityStoreFailureKeepsEntity: an update the store refuses (a
// rule filter property of an unknown type) leaves the subscription's
// settings, metadata, rules, UpdatedAt and message locks as they were.
func TestUpdateEntityStoreFailureKeepsEntity(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := topicFixture(t, newStore())
		const red = "t/Subscriptions/red"
		m := msg("r")
		m.ApplicationProperties = map[string]any{"color": "red"}
		if err := f.e.Send(f.ctx, "t", []*broker.Message{m}); err != nil {
			t.Fatal(err)
		}
		locked := f.receive(red, 1)
		before, _ := f.e.Entity(f.ctx, red)
		f.advance(time.Second)

		err := f.e.UpdateEntity(f.ctx, broker.Entity{
			Path: red, Kind: broker.KindSubscription, UserMetadata: "new",
			Settings: broker.EntitySettings{MaxDeliveryCount: 2},
			Rules:    []broker.Rule{{Name: "c", Filter: &broker.CorrelationFilter{Properties: map[string]any{"p": struct{}{}}}}},
		})
		wantCode(t, err, broker.CodeInvalid)
		after, _ := f.e.Entity(f.ctx, red)
		if !reflect.DeepEqual(after.Settings, before.Settings) || after.UserMetadata != before.UserMetadata ||
			!reflect.DeepEqual(after.Rules, before.Rules) || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("entity changed by a refused update:\nbefore %+v\nafter  %+v", before, after)
		}
		f.mustSettle(broker.Complete, red, locked[0]) // the lock survived
	})
}
