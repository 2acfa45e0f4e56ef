package engine

import (
	"fmt"
	"maps"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// processDue does, in this order, what is due at now: session locks that ran
// out (their message locks are lost), message locks that ran out, scheduled
// messages that become active, and messages whose time to live ran out. Store
// changes go out in one batch without waiting: a lock expiry stores the
// failed delivery it counts, an activation nothing (a Scheduled meta whose
// time has passed is activated again on load).
func (en *entity) processDue(now int64) {
	for {
		s, ok := en.sessionLocks.Min()
		if !ok || s.lockedUntil > now {
			break
		}
		en.loseSession(s, now, broker.EventLockExpired, "session lock of "+quoteID(s.id)+" expired")
	}
	for {
		x, ok := en.lockAt.Min()
		if !ok || x.at > now {
			break
		}
		en.release(x, now, broker.EventLockExpired, "", nil, broker.ActorBroker)
	}
	for {
		x, ok := en.schedAt.Min()
		if !ok || x.at > now {
			break
		}
		en.activate(x)
	}
	for {
		x, ok := en.ttl.Min()
		if !ok || x.expires > now {
			break
		}
		en.unindex(x)
		en.expire(x)
	}
	en.pruneDup(now)
	en.commitQuiet()
}

func quoteID(s string) string { return fmt.Sprintf("%q", s) }

// activate makes a scheduled message active.
func (en *entity) activate(x *entry) {
	en.unindex(x)
	x.state = broker.StateActive
	x.at = 0
	en.index(x)
	en.emit(broker.EventActivated, x, "")
	if en.eng.histLimit > 0 {
		en.hist.note(x, store.HistoryEvent{Kind: broker.EventActivated, Actor: broker.ActorBroker})
	}
	en.notify(x)
}

// notify wakes a receiver that may now take x.
func (en *entity) notify(x *entry) {
	if x.state != broker.StateActive || x.locked() {
		return
	}
	if en.sessionful(x) {
		if s := en.sessions[x.session]; s != nil {
			s.waiters.wake(1)
		}
		return // refreshFree wakes accept-next-session waiters
	}
	en.waiters[x.sub].wake(1)
}

// release ends x's lock without settlement. Every kind but EventReleased
// (abandoned, lock expired, lock lost) is a failed delivery: in the main
// queue it counts, and the message whose count reaches MaxDeliveryCount goes
// to the dead-letter sub-queue instead. A delivery from a dead-letter
// sub-queue never counts, and neither does a release (the client gives back a
// message it never showed). A message past its time to live expires now.
// Otherwise it is available again in sequence order (at or near the head), in
// its state (a deferred message stays deferred). props, if any, are merged
// into its application properties. actor is who ends the lock, for x's
// history.
func (en *entity) release(x *entry, now int64, kind broker.EventKind, why string, props map[string]any, actor string) {
	en.unindex(x)
	token := x.token
	x.token, x.owner, x.at = broker.LockToken{}, 0, 0
	en.emitToken(kind, x, token, "")
	if en.eng.histLimit > 0 {
		count := x.deliveryCount()
		if x.sub == broker.SubQueueMain && kind != broker.EventReleased {
			count++ // the count this failed delivery leaves, counted below
		}
		en.hist.ended(x, kind, token, why, props, count, actor)
	}
	if x.sub == broker.SubQueueMain {
		counted := kind != broker.EventReleased
		if counted {
			x.failed++
			if int64(x.failed) >= int64(en.settings.MaxDeliveryCount) {
				en.deadLetter(x, broker.ReasonMaxDeliveryCountExceeded,
					fmt.Sprintf("Message could not be consumed after %d delivery attempts.", en.settings.MaxDeliveryCount), props, broker.ActorBroker)
				return
			}
		}
		if x.expires != 0 && x.expires <= now {
			if len(props) > 0 {
				en.rewrite(x, props, nil)
			}
			en.expire(x)
			return
		}
		if counted && len(props) == 0 {
			en.batch.PutMeta(x.loc(en.id), x.meta())
		}
	}
	if len(props) > 0 {
		en.rewrite(x, props, nil)
	}
	en.index(x)
	en.notify(x)
}

// expire handles an unindexed main-queue message whose time to live ran out:
// dropped, or dead-lettered when DeadLetteringOnMessageExpiration is on.
func (en *entity) expire(x *entry) {
	en.emit(broker.EventExpired, x, "")
	if en.eng.histLimit > 0 && en.settings.DeadLetteringOnMessageExpiration {
		en.hist.note(x, store.HistoryEvent{Kind: broker.EventExpired, Actor: broker.ActorBroker})
	}
	if en.settings.DeadLetteringOnMessageExpiration {
		en.deadLetter(x, broker.ReasonTTLExpired, "The message expired and was dead lettered.", nil, broker.ActorBroker)
		return
	}
	en.forget(x)
	en.batch.DeleteMessage(x.loc(en.id))
}

// deadLetter moves an unindexed main-queue message to the dead-letter
// sub-queue, keeping its sequence number, with the reason and description as
// application properties (plus props). With ForwardDeadLetteredMessagesTo set
// it is queued for forwarding instead (see flushOutbox). actor is who
// dead-letters it (the broker for a reason of its own), for x's history.
func (en *entity) deadLetter(x *entry, reason, description string, props map[string]any, actor string) {
	set := map[string]any{
		broker.PropDeadLetterReason:           reason,
		broker.PropDeadLetterErrorDescription: description,
	}
	ev := store.HistoryEvent{Kind: broker.EventDeadLettered, Reason: reason, Detail: description, Actor: actor}
	if reason == broker.ReasonMaxDeliveryCountExceeded || reason == broker.ReasonTTLExpired {
		ev.Actor = broker.ActorBroker
	}
	if to := en.settings.ForwardDeadLetteredMessagesTo; to != "" && x.sub == broker.SubQueueMain {
		ev.Detail = description + "; forwarded to " + to
		en.hist.note(x, ev)
		// Leave the index now; the message stays in the store until the
		// target has accepted the copy.
		x.gone = true
		en.leaveMain(x)
		en.outbox = append(en.outbox, outItem{x: x, to: to, set: set, props: props, reason: reason})
		return
	}
	en.rewriteTo(x, broker.SubQueueDeadLetter, props, set)
	en.leaveMain(x)
	x.sub = broker.SubQueueDeadLetter
	x.state = broker.StateActive
	en.hist.note(x, ev)
	en.index(x)
	en.emit(broker.EventDeadLettered, x, reason)
	en.notify(x)
}

// rewrite stores x's message again in place with props (then set) merged into
// its application properties.
func (en *entity) rewrite(x *entry, props, set map[string]any) {
	en.rewriteTo(x, x.sub, props, set)
}

// rewriteTo stores x's message at (to, x.seq) with the properties merged, and
// deletes the old record when the sub-queue changes. x.state is written as
// the message's state.
func (en *entity) rewriteTo(x *entry, to broker.SubQueue, props, set map[string]any) {
	from := x.loc(en.id)
	msg, err := en.eng.store.Get(from)
	if err != nil {
		en.eng.log.Error("stored message missing", "entity", en.path, "seq", x.seq, "err", err)
		return
	}
	m := *msg
	m.ApplicationProperties = mergeProps(msg.ApplicationProperties, props, set)
	state := x.state
	if to != from.Sub {
		state = broker.StateActive // a message enters a dead-letter sub-queue active
	}
	m.State = state
	m.DeliveryCount = x.deliveryCount()
	m.LockToken, m.LockedUntil = broker.LockToken{}, time.Time{}
	meta := x.meta()
	meta.State = state
	loc := from
	loc.Sub = to
	var first *store.HistoryEvent
	if x.hist != 0 {
		first = en.hist.storedFirstEvent(x) // the record keeps its first event
	}
	en.batch.PutMessageWithHistory(loc, meta, &m, first)
	if to != from.Sub {
		en.batch.DeleteMessage(from)
	}
}

// mergeProps returns a new map: base, then props, then set.
func mergeProps(base, props, set map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(props)+len(set))
	maps.Copy(out, base)
	maps.Copy(out, props)
	maps.Copy(out, set)
	return out
}
