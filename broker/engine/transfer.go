package engine

import (
	"errors"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// The transfer dead-letter sub-queue (<entity>/$Transfer/$DeadLetterQueue)
// holds messages that an entity accepted but could not auto-forward: its
// ForwardTo (or ForwardDeadLetteredMessagesTo) target is missing, full,
// disabled for sends, takes no message that large, requires sessions the
// message lacks, or the chain
// of forwards is longer than maxForwardHops. It behaves like the dead-letter
// sub-queue (receive, peek, settle, purge; no time to live, no sessions) and
// its messages are never forwarded again.

// Causes carried in broker.Error.Err, so that transferFailure can tell the
// failures apart from other invalid requests.
var (
	errHopLimit    = errors.New("auto-forwarding hop limit reached")
	errNoSessionID = errors.New("message without SessionId for a session-aware entity")
)

// transferFailure says whether err, from forwarding messages, is a failure
// that puts them in the transfer dead-letter sub-queue, and with which
// DeadLetterReason and DeadLetterErrorDescription. Other errors (a store
// failure, the engine closing) are not: the caller reports them.
func transferFailure(err error) (reason, description string, ok bool) {
	var be *broker.Error
	if !errors.As(err, &be) {
		return "", "", false
	}
	switch {
	case errors.Is(err, errHopLimit):
		return broker.ReasonMaxTransferHopCountExceeded, broker.DescriptionMaxTransferHopCountExceeded, true
	case errors.Is(err, errNoSessionID):
		return broker.ReasonSessionIDIsNull, broker.DescriptionSessionIDIsNull, true
	}
	switch be.Code {
	case broker.CodeNotFound:
		return broker.ReasonEntityNotFound, be.Message, true
	case broker.CodeQuotaExceeded:
		return broker.ReasonQuotaExceeded, be.Message, true
	case broker.CodeMessageTooLarge:
		return broker.ReasonMessageSizeExceeded, be.Message, true
	case broker.CodeEntityDisabled:
		return broker.ReasonEntityDisabled, be.Message, true
	}
	return "", "", false
}

// transferSet returns the application properties a transfer failure sets.
func transferSet(reason, description string) map[string]any {
	return map[string]any{
		broker.PropDeadLetterReason:           reason,
		broker.PropDeadLetterErrorDescription: description,
	}
}

// transferDeadLetter stores msgs, which en accepted under seqs (0: dropped as
// a duplicate) but could not forward, in en's transfer dead-letter
// sub-queue, with the reason and description set. The quota is not checked:
// the messages were accepted, and refusing them now would lose them. It
// returns when they are stored (durable stores: on disk).
func (e *Engine) transferDeadLetter(en *entity, msgs []*broker.Message, seqs []int64, reason, description string, o origin) error {
	set := transferSet(reason, description)
	var entries []*entry
	var total int64
	var p store.Pending
	if err := e.withLocked(en, func() (err error) {
		now := e.now()
		entries = make([]*entry, 0, len(msgs))
		for i, m := range msgs {
			if seqs[i] == 0 {
				continue
			}
			c := *m
			c.ApplicationProperties = mergeProps(m.ApplicationProperties, nil, set)
			c.Size = broker.MessageSize(&c)
			entries = append(entries, en.accept(&c, seqs[i], now, broker.SubQueueTransferDeadLetter, origin{actor: o.actor, via: description}))
			total += c.Size
		}
		en.size += total
		if p, err = en.commit(); err != nil {
			en.size -= total
		}
		return err
	}); err != nil {
		return err
	}
	return e.showWhenStored(en, p, total, entries, broker.EventDeadLettered, reason, "store the messages in the transfer dead-letter sub-queue")
}
