package engine

import (
	"context"
	"slices"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// Settle completes, abandons, dead-letters, defers or releases one locked
// message (see release for what counts as a failed delivery). A
// lock that expired, was lost (settings changed, owner dropped, purge),
// was already settled or never existed fails with broker.ErrLockLost and
// touches nothing. Complete returns when the removal is stored (durable
// stores: on disk).
func (e *Engine) Settle(ctx context.Context, s broker.Settlement) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.leave()
	var one [1]error
	e.settleGroup(ctx, []broker.Settlement{s}, one[:])
	return one[0]
}

// SettleMany settles many locked messages at once: consecutive settlements
// of the same entity share one mutex hold and one store batch. It returns nil
// when every settlement succeeded, and otherwise one error per settlement
// (nil for those that succeeded).
func (e *Engine) SettleMany(ctx context.Context, ss []broker.Settlement) []error {
	if err := e.begin(ctx); err != nil {
		return fill(len(ss), err)
	}
	defer e.leave()
	// The errors go to the stack first: most calls succeed and return nil,
	// and only a failed call's list reaches the heap.
	var small [settleBatch]error
	errs := small[:min(len(ss), len(small))]
	if len(ss) > len(small) {
		errs = make([]error, len(ss))
	}
	for i := 0; i < len(ss); {
		j := i + 1
		for j < len(ss) && ss[j].Entity == ss[i].Entity {
			j++
		}
		e.settleGroup(ctx, ss[i:j], errs[i:j])
		i = j
	}
	for _, err := range errs {
		if err != nil {
			return slices.Clone(errs)
		}
	}
	return nil
}

// settleBatch is the most settlements whose errors SettleMany keeps on the
// stack: a receive's batch.
const settleBatch = 64

func fill(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// settleGroup settles settlements that all address the same entity.
func (e *Engine) settleGroup(ctx context.Context, ss []broker.Settlement, errs []error) {
	en, sub, err := e.lookup(ss[0].Entity)
	if err != nil {
		fillErrs(errs, err)
		return
	}
	var p store.Pending
	var cerr error // the commit's, when the settlements themselves were made
	if err := e.withDue(en, func(now int64) error {
		if err := en.receiveRefused(); err != nil {
			return err
		}
		en.use(now)
		for i := range ss {
			errs[i] = en.settle(&ss[i], sub, now, e.actor)
		}
		p, cerr = en.commit()
		return nil
	}); err != nil {
		fillErrs(errs, err)
		return
	}
	if cerr == nil {
		if cerr = p.Wait(); cerr != nil {
			cerr = storeErr("store the settlement", en.path, cerr)
		}
	}
	if cerr != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = cerr
			}
		}
	}
}

// fillErrs sets every error of errs to err.
func fillErrs(errs []error, err error) {
	for i := range errs {
		errs[i] = err
	}
}

// settle applies one settlement under the entity mutex, made by actor.
func (en *entity) settle(s *broker.Settlement, sub broker.SubQueue, now int64, actor string) error {
	x := en.lockedBy(s.Token)
	if x == nil || x.sub != sub {
		return en.lockLost(sub, s.Token)
	}
	switch s.Kind {
	case broker.Complete:
		en.remove(x)
		en.emit(broker.EventCompleted, x, "")
	case broker.Abandon:
		en.release(x, now, broker.EventAbandoned, "", s.PropertiesToModify, actor)
	case broker.Release:
		en.release(x, now, broker.EventReleased, "", nil, actor)
	case broker.DeadLetter:
		if x.sub != broker.SubQueueMain {
			return newErr(broker.CodeInvalid, en.path, "the message with sequence number %d is in the %s already; it cannot be dead-lettered again", x.seq, x.sub)
		}
		en.unindex(x)
		en.unlockEntry(x)
		en.deadLetter(x, s.Reason, s.Description, s.PropertiesToModify, actor)
	case broker.Defer:
		en.unindex(x)
		token := en.unlockEntry(x)
		x.state = broker.StateDeferred
		if x.sub == broker.SubQueueMain {
			x.failed++ // a deferral counts a delivery (see entry.failed)
		}
		if len(s.PropertiesToModify) > 0 {
			en.rewrite(x, s.PropertiesToModify, nil)
		} else {
			en.batch.PutMeta(x.loc(en.id), x.meta())
		}
		en.index(x)
		en.emitToken(broker.EventDeferred, x, token, "")
		en.hist.ended(x, broker.EventDeferred, token, "", s.PropertiesToModify, 0, actor)
	default:
		return newErr(broker.CodeInvalid, en.path, "unknown settlement kind %d", s.Kind)
	}
	return nil
}

// unlockEntry clears the lock fields of an unindexed entry and returns the
// token it had.
func (en *entity) unlockEntry(x *entry) broker.LockToken {
	t := x.token
	x.token, x.owner, x.at = broker.LockToken{}, 0, 0
	return t
}

// RenewLock extends a message lock to now + LockDuration and returns the new
// expiry; an expired, lost or unknown lock fails with broker.ErrLockLost.
func (e *Engine) RenewLock(ctx context.Context, entity string, token broker.LockToken) (time.Time, error) {
	if err := e.begin(ctx); err != nil {
		return time.Time{}, err
	}
	defer e.leave()
	ts, err := e.renewLocks(ctx, entity, []broker.LockToken{token})
	if err != nil {
		return time.Time{}, err
	}
	return ts[0], nil
}

// RenewLocks renews several locks of one entity at once (the management
// operation renews a list); any lost lock fails the call with
// broker.ErrLockLost and renews nothing.
func (e *Engine) RenewLocks(ctx context.Context, entity string, tokens []broker.LockToken) ([]time.Time, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	return e.renewLocks(ctx, entity, tokens)
}

func (e *Engine) renewLocks(ctx context.Context, entity string, tokens []broker.LockToken) ([]time.Time, error) {
	en, sub, err := e.lookup(entity)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	err = e.withDue(en, func(now int64) (err error) {
		out, err = en.renewLocks(sub, tokens, now, e.by(""))
		return err
	})
	return out, err
}

// renewLocks is renewLocks's work under en's mutex, as o says.
func (en *entity) renewLocks(sub broker.SubQueue, tokens []broker.LockToken, now int64, o origin) ([]time.Time, error) {
	if err := en.receiveRefused(); err != nil {
		return nil, err
	}
	en.use(now)
	xs := make([]*entry, len(tokens))
	for i, t := range tokens {
		x := en.lockedBy(t)
		if x == nil || x.sub != sub {
			return nil, en.lockLost(sub, t)
		}
		xs[i] = x
	}
	out := make([]time.Time, len(xs))
	until := lockExpiry(now, en.settings.LockDuration)
	for i, x := range xs {
		if en.coveredBySession(x) {
			// Its lock is its session's: renewing the session lock renews
			// it.
			out[i] = time.Unix(0, x.at).UTC()
			continue
		}
		if x.at != until {
			en.lockAt.Delete(x)
			x.at = until
			en.lockAt.Set(x)
		}
		out[i] = time.Unix(0, until).UTC()
		en.emit(broker.EventRenewed, x, "")
		if en.hist.rider(x, broker.EventRenewed, now, until, o) {
			en.flushRiders()
		}
	}
	return out, nil
}
