package engine

import (
	"context"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// SetRules replaces a subscription's rules and changes nothing else: unlike
// UpdateEntity it keeps every message lock (a message received before the
// change can still be settled), as Service Bus does when a rule is added,
// replaced or removed. The new rules decide for messages sent after SetRules
// returns; messages already in the subscription stay. nil or no rules make
// the subscription take every message (the $Default TrueFilter).
//
// Rules are checked as in CreateEntity and compiled once, here. A
// rule keeps the CreatedAt it comes with; one without takes that of the
// current rule of the same name (regardless of case), or else the clock's
// time. The subscription's UpdatedAt becomes the clock's time. The rules are
// stored before SetRules returns.
func (e *Engine) SetRules(ctx context.Context, path string, rules []broker.Rule) error {
	if err := e.enter(); err != nil {
		return err
	}
	defer e.leave()
	if err := checkCtx(ctx); err != nil {
		return err
	}
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
	if err := checkRules(en.path, rules); err != nil {
		return err
	}
	now, err := e.lockedDue(en)
	if err != nil {
		return err
	}
	oldRules, oldMatch, oldUpdated := en.rules, en.match, en.updatedAt
	at := time.Unix(0, now).UTC()
	en.rules = stampRules(rules, en.rules, at)
	en.match = mustCompile(en.path, en.rules)
	en.updatedAt = at
	en.batch.PutEntity(store.EntityRecord{ID: en.id, Entity: stored(en.public())})
	p, err := en.commit()
	if err != nil {
		// Nothing was stored: the subscription keeps its rules.
		en.rules, en.match, en.updatedAt = oldRules, oldMatch, oldUpdated
	} else {
		en.use(now)
	}
	e.unlock(en)
	if err != nil {
		return err
	}
	if err := p.Wait(); err != nil {
		return storeErr("store the rules", en.path, err)
	}
	e.emitEntity(broker.EventEntityChanged, en.path, broker.SubQueueMain, "rules changed")
	return nil
}
