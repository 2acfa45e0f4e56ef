package broker_test

import (
	"context"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// ruleFake reads one rule for any subscription.
type ruleFake struct{ broker.Client }

func (ruleFake) SubscriptionRules(_ context.Context, path string) ([]broker.Rule, error) {
	return []broker.Rule{{Name: path}}, nil
}

// wrapper stands for a client that wraps another (the SSH session's).
type wrapper struct{ broker.Client }

func (w wrapper) Unwrap() broker.Client { return w.Client }

// RulesOf finds the rule reader of a client through read-only and other
// wrappers, and none where no client of the chain has one.
func TestRulesOf(t *testing.T) {
	for name, c := range map[string]broker.Client{
		"direct":            ruleFake{},
		"read-only":         broker.ReadOnly(ruleFake{}),
		"wrapped read-only": wrapper{broker.ReadOnly(ruleFake{})},
		"wrapped twice":     wrapper{wrapper{ruleFake{}}},
	} {
		rr, ok := broker.RulesOf(c)
		if !ok {
			t.Errorf("%s: RulesOf found no reader", name)
			continue
		}
		rules, err := rr.SubscriptionRules(context.Background(), "t/Subscriptions/s")
		if err != nil || len(rules) != 1 || rules[0].Name != "t/Subscriptions/s" {
			t.Errorf("%s: SubscriptionRules = %+v, %v", name, rules, err)
		}
	}
	for name, c := range map[string]broker.Client{
		"plain":             &sessionFake{},
		"read-only plain":   broker.ReadOnly(&sessionFake{}),
		"wrapped read-only": wrapper{broker.ReadOnly(&sessionFake{})},
	} {
		if _, ok := broker.RulesOf(c); ok {
			t.Errorf("%s: RulesOf found a reader where there is none", name)
		}
	}
}
