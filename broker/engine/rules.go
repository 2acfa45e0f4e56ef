package engine

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// SetRules replaces a subscription's rules and changes nothing else: unlike
// UpdateEntity it keeps every message lock (a message received before the
// change can still be settled), as Service Bus does when a rule is added,
// replaced or removed. The new rules decide for messages sent after SetRules
// returns; messages already in the subscription stay. nil or no rules leave
// the subscription without rules: it then takes no message, as in Service
// Bus (its $Default rule is an ordinary rule, named broker.DefaultRuleName,
// that can be removed).
//
// Rules are checked as in CreateEntity and compiled once, here. A
// rule keeps the CreatedAt it comes with; one without takes that of the
// current rule of the same name (regardless of case), or else the clock's
// time. The subscription's UpdatedAt becomes the clock's time. The rules are
// stored before SetRules returns.
func (e *Engine) SetRules(ctx context.Context, path string, rules []broker.Rule) error {
	return e.editRules(ctx, path, "rules changed", func(string, []broker.Rule) ([]broker.Rule, error) {
		return rules, nil
	})
}

// AddRule adds a rule to a subscription's rules, after the others, as
// SetRules would with the rule appended: locks and messages stay. A rule of
// the same name (regardless of case) is broker.ErrAlreadyExists; a rule that
// does not check (see CreateEntity) is CodeInvalid and names the rule and,
// for a SQL expression, the position of the problem.
func (e *Engine) AddRule(ctx context.Context, path string, rule broker.Rule) error {
	return e.editRules(ctx, path, "rule "+rule.Name+" added", func(sub string, cur []broker.Rule) ([]broker.Rule, error) {
		if i := ruleIndex(cur, rule.Name); i >= 0 {
			return nil, newErr(broker.CodeAlreadyExists, sub, "%s", broker.ExistsMessage(broker.EntityRef(e.ns, broker.KindSubscription, sub+"/Rules/"+rule.Name)))
		}
		return append(slices.Clone(cur), rule), nil
	})
}

// RemoveRule removes the rule called name (regardless of case) from a
// subscription, as SetRules would with the others: locks and messages stay.
// Removing the last rule is allowed; the subscription then takes no message.
// A rule that does not exist is broker.ErrNotFound.
func (e *Engine) RemoveRule(ctx context.Context, path, name string) error {
	return e.editRules(ctx, path, "rule "+name+" removed", func(sub string, cur []broker.Rule) ([]broker.Rule, error) {
		i := ruleIndex(cur, name)
		if i < 0 {
			// Worded as Service Bus words it, which the SDKs recognise.
			return nil, newErr(broker.CodeNotFound, sub, "%s", broker.NotFoundMessage(broker.EntityRef(e.ns, broker.KindSubscription, sub+"/Rules/"+name)))
		}
		return slices.Delete(slices.Clone(cur), i, i+1), nil
	})
}

// ruleIndex returns the index of the rule called name (regardless of
// case), or -1.
func ruleIndex(rules []broker.Rule, name string) int {
	return slices.IndexFunc(rules, func(r broker.Rule) bool { return strings.EqualFold(r.Name, name) })
}

// editRules replaces a subscription's rules with what edit makes of the
// current ones (called with the entity locked; it must not change them),
// and stores them. why is the reason of the entity-changed event.
func (e *Engine) editRules(ctx context.Context, path, why string, edit func(sub string, cur []broker.Rule) ([]broker.Rule, error)) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.leave()
	en, sub, err := e.lookup(path)
	if err != nil {
		return err
	}
	if sub != broker.SubQueueMain {
		return newErr(broker.CodeInvalid, en.path, "a %s has no rules; set the rules of %q", sub, en.path)
	}
	if en.kind != broker.KindSubscription {
		return newErr(broker.CodeInvalid, en.path, "%q is a %s; only subscriptions have rules", en.path, en.kind)
	}
	var p store.Pending
	if err := e.withDue(en, func(now int64) (err error) {
		p, err = en.editRules(edit, now)
		return err
	}); err != nil {
		return err
	}
	if err := p.Wait(); err != nil {
		return storeErr("store the rules", en.path, err)
	}
	e.emitEntity(broker.EventEntityChanged, en.path, broker.SubQueueMain, why)
	return nil
}

// editRules is Engine.editRules's work under en's mutex: the new rules
// applied and their store change committed, or en as it was.
func (en *entity) editRules(edit func(sub string, cur []broker.Rule) ([]broker.Rule, error), now int64) (store.Pending, error) {
	rules, err := edit(en.path, en.rules)
	if err == nil {
		err = checkRules(en.path, rules)
	}
	if err != nil {
		return nil, err
	}
	oldRules, oldMatch, oldUpdated := en.rules, en.match, en.updatedAt
	at := time.Unix(0, now).UTC()
	en.rules = stampRules(rules, en.rules, at)
	if en.rules == nil {
		en.rules = []broker.Rule{} // no rules, not the $Default rule
	}
	en.match = mustCompile(en.path, en.rules)
	en.updatedAt = at
	en.batch.PutEntity(store.EntityRecord{ID: en.id, Entity: stored(en.public())})
	p, err := en.commit()
	if err != nil {
		// Nothing was stored: the subscription keeps its rules.
		en.rules, en.match, en.updatedAt = oldRules, oldMatch, oldUpdated
		return nil, err
	}
	en.use(now)
	return p, nil
}
