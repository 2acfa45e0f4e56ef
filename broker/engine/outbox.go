package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// outItem is a dead-lettered message on its way to the entity named by
// ForwardDeadLetteredMessagesTo. It has left the source's index but stays in
// the source's store until the target has accepted the copy, so that a crash
// in between keeps it (in the source's main queue) rather than losing it.
type outItem struct {
	x      *entry
	to     string
	set    map[string]any // DeadLetterReason and DeadLetterErrorDescription
	props  map[string]any // PropertiesToModify of the settlement
	reason string
}

// flushes counts the outbox flushes under way (a leaf of the lock order),
// so that Tick can wait for them.
type flushes struct {
	mu   sync.Mutex
	n    int
	idle *sync.Cond // on mu: n reached 0
}

// begin counts a flush; the caller still holds the entity's mutex.
func (f *flushes) begin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
}

// end counts a flush done.
func (f *flushes) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 && f.idle != nil {
		f.idle.Broadcast()
	}
}

// wait returns when no flush is under way.
func (f *flushes) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.idle == nil {
		f.idle = sync.NewCond(&f.mu)
	}
	for f.n > 0 {
		f.idle.Wait()
	}
}

// flushOutbox forwards dead-lettered messages after the source mutex was
// released. A forward that fails for a reason transferFailure knows (target
// missing or full, message too large for it, hop limit) puts the message in
// the source's transfer dead-letter sub-queue with that reason, its
// description telling the dead-letter reason it had; any other failure puts
// it in the source's own dead-letter sub-queue as it was dead-lettered.
// Forwarding happens once, when the message is dead-lettered: neither
// sub-queue forwards it later.
func (e *Engine) flushOutbox(src *entity, items []outItem) {
	for _, it := range items {
		x := it.x
		loc := x.loc(src.id)
		msg, err := e.store.Get(loc)
		if err != nil {
			e.log.Error("dead-lettered message missing", "entity", src.path, "seq", x.seq, "err", err)
			_ = e.withLocked(src, func() error { // a deleted entity counts nothing
				src.size -= int64(x.size)
				return nil
			})
			continue
		}
		c := e.acceptCopy(msg)
		c.ApplicationProperties = mergeProps(msg.ApplicationProperties, it.props, it.set)
		c.DeadLetterSource = src.path
		c.ScheduledEnqueueTime = time.Time{}
		c.Size = broker.MessageSize(c)
		var ferr error
		target, _, lerr := e.lookup(it.to)
		if lerr != nil {
			ferr = newErr(broker.CodeNotFound, src.path, "the target %q of ForwardDeadLetteredMessagesTo does not exist", it.to)
		} else {
			_, ferr = e.deliver(target, []*broker.Message{c}, 1, true,
				origin{actor: broker.ActorBroker, via: fmt.Sprintf("dead-lettered in %s (sequence number %d) and forwarded", src.path, x.seq)})
		}
		_ = e.withLocked(src, func() error { // a deleted entity keeps nothing
			src.forwarded(it, ferr, target)
			return nil
		})
	}
}

// forwarded records in src, under its mutex, how the forward of a
// dead-lettered message ended: gone to target (ferr nil), or kept in a
// sub-queue of src.
func (src *entity) forwarded(it outItem, ferr error, target *entity) {
	x := it.x
	loc := x.loc(src.id)
	if ferr == nil {
		src.size -= int64(x.size)
		src.hist.drop(x)
		src.batch.DeleteMessage(loc)
		src.commitQuiet()
		src.emit(broker.EventDeadLettered, x, it.reason)
		src.emit(broker.EventForwarded, x, target.path)
		return
	}
	to, set, reason := broker.SubQueueDeadLetter, it.set, it.reason
	if r, d, ok := transferFailure(ferr); ok {
		to, reason = broker.SubQueueTransferDeadLetter, r
		set = transferSet(r, fmt.Sprintf("%s (dead-lettered with reason %q)", d, it.reason))
	}
	src.eng.log.Warn("forwarding a dead-lettered message failed; kept in a sub-queue of the source",
		"entity", src.path, "seq", x.seq, "to", it.to, "sub-queue", to, "err", ferr)
	x.gone = false
	x.state = broker.StateActive
	src.rewriteTo(x, to, it.props, set)
	x.sub = to
	src.index(x)
	if src.eng.histLimit > 0 {
		src.hist.note(x, store.HistoryEvent{Kind: broker.EventDeadLettered, Actor: broker.ActorBroker, Reason: reason,
			Detail: "kept here: forwarding to " + it.to + " failed"})
	}
	src.commitQuiet()
	src.emit(broker.EventDeadLettered, x, reason)
	src.notify(x)
}
