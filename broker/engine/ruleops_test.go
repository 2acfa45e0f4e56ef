package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// A subscription created without rules has the $Default TrueFilter,
// created with it; one created with an empty rule list has no rule and gets
// nothing. Both survive a restart as they are.
func TestSubscriptionDefaultRuleAndNoRules(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		for _, ent := range []broker.Entity{
			{Path: "t", Kind: broker.KindTopic},
			{Path: "t/Subscriptions/default", Kind: broker.KindSubscription},
			{Path: "t/Subscriptions/none", Kind: broker.KindSubscription, Rules: []broker.Rule{}},
		} {
			if err := f.e.CreateEntity(f.ctx, ent); err != nil {
				t.Fatal(err)
			}
		}
		check := func(f *fixture) {
			t.Helper()
			ent, err := f.e.Entity(f.ctx, "t/Subscriptions/default")
			if err != nil || len(ent.Rules) != 1 || ent.Rules[0].Name != broker.DefaultRuleName ||
				ent.Rules[0].Filter != nil || ent.Rules[0].SQL != "" || ent.Rules[0].Action != "" || !ent.Rules[0].CreatedAt.Equal(t0) {
				t.Fatalf("rules of the default subscription = %+v, %v; want $Default created at %v", ent.Rules, err, t0)
			}
			ent, err = f.e.Entity(f.ctx, "t/Subscriptions/none")
			if err != nil || ent.Rules == nil || len(ent.Rules) != 0 {
				t.Fatalf("rules of the rule-less subscription = %#v, %v; want none", ent.Rules, err)
			}
		}
		check(f)
		f.send("t", msg("a"))
		f.wantCounts("t/Subscriptions/default", broker.Counts{Active: 1})
		f.wantCounts("t/Subscriptions/none", broker.Counts{})

		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		check(g)
		g.send("t", msg("b"))
		g.wantCounts("t/Subscriptions/default", broker.Counts{Active: 2})
		g.wantCounts("t/Subscriptions/none", broker.Counts{})
	})
}

// Removing a subscription's last rule is allowed: it then gets nothing,
// keeps its messages and locks, and stays so after a restart, until a rule
// is added again.
func TestRemoveLastRule(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := topicFixture(t, newStore())
		const all = "t/Subscriptions/all"
		f.send("t", msg("before"))
		locked := f.receiveOne(all)
		f.advance(time.Second)
		if err := f.e.RemoveRule(f.ctx, all, "$DEFAULT"); err != nil { // names match regardless of case
			t.Fatal(err)
		}
		ent := f.wantTimes(all, t0, t0.Add(time.Second), t0)
		if ent.Rules == nil || len(ent.Rules) != 0 {
			t.Fatalf("rules = %#v, want none", ent.Rules)
		}
		f.send("t", msg("after"))
		f.wantCounts(all, broker.Counts{Locked: 1})
		f.mustSettle(broker.Complete, all, locked)
		wantCode(t, f.e.RemoveRule(f.ctx, all, "$Default"), broker.CodeNotFound)

		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFixture(t, newStore(), f.clock)
		if ent, err := g.e.Entity(g.ctx, all); err != nil || ent.Rules == nil || len(ent.Rules) != 0 {
			t.Fatalf("rules after restart = %#v, %v; want none", ent.Rules, err)
		}
		g.send("t", msg("restarted"))
		g.wantCounts(all, broker.Counts{})

		if err := g.e.AddRule(g.ctx, all, broker.Rule{Name: "x", SQL: "sys.MessageId = 'x'"}); err != nil {
			t.Fatal(err)
		}
		g.send("t", msg("x"), msg("y"))
		g.wantCounts(all, broker.Counts{Active: 1})
	})
}

// AddRule appends a rule and keeps locks; a name in use (regardless of
// case) is ErrAlreadyExists, a bad expression CodeInvalid with its
// position, and neither changes anything. RemoveRule of an unknown name is
// ErrNotFound.
func TestAddAndRemoveRule(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := topicFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		const red = "t/Subscriptions/red"
		m := msg("r1")
		m.ApplicationProperties = map[string]any{"color": "red"}
		f.send("t", m)
		locked := f.receiveOne(red)
		f.advance(time.Second)

		blue := broker.Rule{Name: "blue", SQL: "color = 'blue'", Action: "SET seen = 1"}
		if err := f.e.AddRule(f.ctx, red, blue); err != nil {
			t.Fatal(err)
		}
		ent := f.wantTimes(red, t0, t0.Add(time.Second), t0)
		if len(ent.Rules) != 2 || ent.Rules[0].Name != "red" || !ent.Rules[0].CreatedAt.Equal(t0) ||
			ent.Rules[1].Name != "blue" || ent.Rules[1].SQL != blue.SQL || ent.Rules[1].Action != blue.Action ||
			!ent.Rules[1].CreatedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("rules = %+v", ent.Rules)
		}
		f.send("t", &broker.Message{MessageID: "b", ApplicationProperties: map[string]any{"color": "blue"}})
		f.wantCounts(red, broker.Counts{Active: 1, Locked: 1})
		f.mustSettle(broker.Complete, red, locked)

		f.advance(time.Second)
		be := wantCode(t, f.e.AddRule(f.ctx, red, broker.Rule{Name: "BLUE"}), broker.CodeAlreadyExists)
		if !errors.Is(be, broker.ErrAlreadyExists) || be.Message != `The messaging entity 'sbemulatorns:Topic:t|red|BLUE' already exists.` || be.TrackingID == "" {
			t.Errorf("duplicate rule: %v", be)
		}
		be = wantCode(t, f.e.AddRule(f.ctx, red, broker.Rule{Name: "bad", SQL: "color = 'x' AND"}), broker.CodeInvalid)
		if want := `rule "bad": SQL filter "color = 'x' AND": at position 16: expected a value, found the end of the expression`; be.Message != want {
			t.Errorf("bad SQL: %q, want %q", be.Message, want)
		}
		wantCode(t, f.e.AddRule(f.ctx, "q", broker.Rule{Name: "x"}), broker.CodeInvalid)
		wantCode(t, f.e.AddRule(f.ctx, "t/Subscriptions/missing", broker.Rule{Name: "x"}), broker.CodeNotFound)
		be = wantCode(t, f.e.RemoveRule(f.ctx, red, "green"), broker.CodeNotFound)
		if want := `The messaging entity 'sbemulatorns:Topic:t|red|green' could not be found.`; be.Message != want {
			t.Errorf("unknown rule: %q, want %q", be.Message, want)
		}
		if ent, _ := f.e.Entity(f.ctx, red); len(ent.Rules) != 2 || !ent.UpdatedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("refused calls changed the rules: %+v", ent.Rules)
		}

		if err := f.e.RemoveRule(f.ctx, red, "Red"); err != nil {
			t.Fatal(err)
		}
		red2 := msg("r2")
		red2.ApplicationProperties = map[string]any{"color": "red"}
		f.send("t", red2)
		f.wantCounts(red, broker.Counts{Active: 1}) // the blue copy only
	})
}

// A subscription stored by an older version with no rule record at all
// (which meant the $Default TrueFilter) loads with the $Default rule,
// created with the subscription.
func TestStoredSubscriptionWithoutRulesLoadsDefault(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		st := newStore()
		var b store.Batch
		b.PutEntity(store.EntityRecord{ID: 1, Entity: broker.Entity{Path: "t", Kind: broker.KindTopic, CreatedAt: t0, UpdatedAt: t0}})
		b.PutEntity(store.EntityRecord{ID: 2, Entity: broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription, CreatedAt: t0, UpdatedAt: t0}})
		b.SetSequence(idCounterEntity, 2)
		p, err := st.Apply(&b)
		if err == nil {
			err = p.Wait()
		}
		if err != nil {
			t.Fatal(err)
		}
		f := openFixture(t, st, clockwork.NewFakeClockAt(t0.Add(time.Hour)))
		ent, err := f.e.Entity(f.ctx, "t/Subscriptions/s")
		if err != nil || len(ent.Rules) != 1 || ent.Rules[0].Name != broker.DefaultRuleName || !ent.Rules[0].CreatedAt.Equal(t0) {
			t.Fatalf("rules = %+v, %v; want $Default created at %v", ent.Rules, err, t0)
		}
		f.send("t", msg("a"))
		f.wantCounts("t/Subscriptions/s", broker.Counts{Active: 1})
	})
}
