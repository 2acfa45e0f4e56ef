package model

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
)

// resubmit resubmits the dead-lettered messages with the given
// sequence numbers, from either dead-letter sub-queue, touching those
// messages only (broker.ResubmitSequences), as bulk work: the locks this
// dashboard holds on some of them are used, and each outcome updates the
// progress box and the held locks.
func (b *bulkWork) resubmit(m *Model, seqs []int64) tea.Cmd {
	if b.busy(m, "resubmit") {
		return nil
	}
	entity := m.entity
	target := broker.ResubmitTarget(entity)
	// Where each is, as far as the pane knows: its sub-queue.
	subOf := make(map[int64]broker.SubQueue)
	for _, x := range m.panes[deadLetteredPane].rows {
		subOf[x.SequenceNumber] = x.SubQueue
	}
	var ready []broker.LockedAt
	var keys []heldKey
	var want []int64
	for _, s := range seqs {
		held := false
		for _, sub := range deadLetterQueues {
			k := heldKey{broker.SubQueueAddress(entity, sub), s}
			if h := m.held[k]; h != nil && !h.settling {
				h.settling = true
				ready = append(ready, broker.LockedAt{Address: k.address, Msg: h.msg})
				keys = append(keys, k)
				held = true
				break
			}
		}
		if !held {
			want = append(want, s)
		}
	}
	defer b.holdKeys(m, keys)
	c, timeout, n := m.client, m.opts.Timeout, m.opts.Concurrency
	title := fmt.Sprintf("resubmit %d message(s) to %s", len(seqs), target)
	o := broker.ResubmitSequencesOptions{Held: ready, Seqs: want, SeenIn: subOf, Concurrency: n, Timeout: timeout}
	return b.start(m, title, "resubmitted", len(seqs), func(ctx context.Context, report func(jobEvent)) {
		broker.ResubmitSequences(ctx, c, entity, o, func(seq int64, dlq string, err error) {
			e := jobEvent{ok: err == nil, err: err, label: fmt.Sprintf("sequence number %d", seq)}
			if dlq != "" {
				e.key = &heldKey{dlq, seq}
			}
			report(e)
		})
	})
}
