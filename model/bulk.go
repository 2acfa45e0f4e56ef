package model

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// bulkJob is bulk work in progress: settling a selection, resubmitting, a
// purge. It runs in a command with bounded concurrency and reports
// progress on a channel that a re-armed command reads, so the screen stays
// live meanwhile.
type bulkJob struct {
	id        int
	title     string
	verb      string // "resubmitted", "completed", …
	total     int
	done      int
	failed    int
	failures  []string
	notes     []string
	start     time.Time
	cancel    context.CancelFunc
	cancelled bool
	ch        chan jobEvent
	// keys are the held locks the job works on; when it ends, those it
	// did not get to are free to be settled again.
	keys []heldKey
	// result is what the job's last event handed over (see
	// jobEvent.result); finish, when set, reports the job instead of
	// bulkWork.report and takes its result into the state.
	result any
	finish func(j *bulkJob) tea.Cmd
}

// dialog is the progress of the job at now, drawn over the screen.
func (j *bulkJob) dialog(c *ui.Common, now time.Time) ui.Dialog {
	return ui.ProgressDialog(c, ui.Progress{Title: j.title, Done: j.done, Failed: j.failed,
		Total: j.total, Elapsed: now.Sub(j.start), Cancelled: j.cancelled})
}

// bulkWork is the dashboard's bulk work: the job running (nil for none),
// drawn as a progress box over every view (mainScreen.frame), and the
// count that numbers jobs, so that progress of an ended job is dropped.
// One job runs at a time; esc on the main screen cancels it.
type bulkWork struct {
	job *bulkJob
	seq int
}

// jobEvent is one outcome of bulk work.
type jobEvent struct {
	// total, when > 0, sets the number of items (known late for a whole
	// queue).
	total int
	// ok or err is the outcome of one item; label names it. count, when
	// above 1, is how many items an ok outcome stands for (a purge).
	count int
	ok    bool
	err   error
	label string
	// key is the held lock the item was about, for the model to update.
	key   *heldKey
	until time.Time
	// note is a line for the final report.
	note string
	// result, when not nil, is the job's outcome for its finish (the
	// sequence numbers a selection found, an export's file).
	result any
}

// jobProgressMsg carries outcomes read from a job's channel.
type jobProgressMsg struct {
	id     int
	events []jobEvent
	closed bool
}

// maxReportFailures bounds the failures listed in a report.
const maxReportFailures = 8

// start starts bulk work: run reports each outcome through report.
func (b *bulkWork) start(m *Model, title, verb string, total int, run func(ctx context.Context, report func(jobEvent))) tea.Cmd {
	if b.job != nil {
		m.setErr(&ActionError{Action: title, Reason: "other bulk work is running (esc cancels it)"})
		return nil
	}
	b.seq++
	ctx, cancel := context.WithCancel(m.life)
	j := &bulkJob{id: b.seq, title: title, verb: verb, total: total, start: m.now, cancel: cancel, ch: make(chan jobEvent, 256)}
	b.job = j
	ch := j.ch
	runCmd := func() tea.Msg {
		defer close(ch)
		defer cancel()
		run(ctx, func(e jobEvent) { ch <- e })
		return nil
	}
	return tea.Batch(runCmd, waitJob(j.id, ch))
}

// waitJob reads the next outcomes of a job; Update re-arms it.
func waitJob(id int, ch <-chan jobEvent) tea.Cmd {
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return jobProgressMsg{id: id, closed: true}
		}
		evs := []jobEvent{e}
		for len(evs) < 512 {
			select {
			case e, ok := <-ch:
				if !ok {
					return jobProgressMsg{id: id, events: evs, closed: true}
				}
				evs = append(evs, e)
			default:
				return jobProgressMsg{id: id, events: evs}
			}
		}
		return jobProgressMsg{id: id, events: evs}
	}
}

// cancel cancels the running job; its report follows.
func (b *bulkWork) cancel() {
	if b.job == nil || b.job.cancelled {
		return
	}
	b.job.cancelled = true
	b.job.cancel()
}

// onProgress takes progress of the running job.
func (b *bulkWork) onProgress(m *Model, msg tea.Msg) tea.Cmd {
	pm, ok := msg.(jobProgressMsg)
	if !ok || b.job == nil || pm.id != b.job.id {
		return nil
	}
	j := b.job
	for _, e := range pm.events {
		if e.total > 0 {
			j.total = e.total
		}
		if e.note != "" {
			j.notes = append(j.notes, e.note)
		}
		if e.result != nil {
			j.result = e.result
		}
		switch {
		case e.ok:
			j.done += max(1, e.count)
			if e.key != nil {
				if e.until.IsZero() {
					delete(m.held, *e.key)
				} else if h := m.held[*e.key]; h != nil {
					c := h.msg.Clone()
					c.LockedUntil = e.until
					h.msg, h.renewing = c, false
				}
			}
		case e.err != nil:
			j.failed++
			if len(j.failures) < maxReportFailures {
				j.failures = append(j.failures, e.label+": "+e.err.Error())
			}
			if e.key != nil {
				if h := m.held[*e.key]; h != nil {
					h.settling, h.renewing = false, false
				}
				if errors.Is(e.err, broker.ErrLockLost) {
					m.lostHeld(*e.key)
				}
			}
		}
	}
	if !pm.closed {
		return tea.Batch(waitJob(j.id, j.ch), m.requestRefresh())
	}
	b.job = nil
	for _, k := range j.keys {
		if h := m.held[k]; h != nil {
			h.settling, h.renewing = false, false
		}
	}
	if j.finish != nil {
		return tea.Batch(j.finish(j), m.requestRefresh())
	}
	b.report(m, j)
	return m.requestRefresh()
}

// report reports a finished job in the status bar, as a passing
// notice (or the error of its first failure) that takes no key, and keeps
// the whole report, notes and every failure listed, in the message log.
func (b *bulkWork) report(m *Model, j *bulkJob) {
	title := j.title
	if j.cancelled {
		title += " (cancelled)"
	}
	summary := fmt.Sprintf("%s: %d %s, %d failed, %s", title, j.done, j.verb, j.failed, ui.Short(m.now.Sub(j.start)))
	for _, n := range j.notes {
		m.log.add(m.now, false, j.title+": "+n, "")
	}
	for _, f := range j.failures {
		m.log.add(m.now, true, j.title+": "+f, "")
	}
	if j.failed > len(j.failures) {
		m.log.add(m.now, true, fmt.Sprintf("%s: … and %d more failures", j.title, j.failed-len(j.failures)), "")
	}
	if j.failed > 0 {
		m.setErr(fmt.Errorf("%s; first: %s", summary, j.failures[0]))
		return
	}
	if len(j.notes) == 1 {
		summary += ": " + j.notes[0]
	}
	m.setInfo(summary)
}

// busy refuses new bulk work while a job runs.
func (b *bulkWork) busy(m *Model, title string) bool {
	if b.job == nil {
		return false
	}
	m.setErr(&ActionError{Action: title, Reason: "other bulk work is running (esc cancels it)"})
	return true
}

// settle settles several held locks.
func (b *bulkWork) settle(m *Model, keys []heldKey, s broker.Settlement) tea.Cmd {
	if b.busy(m, s.Kind.String()) {
		return nil
	}
	type item struct {
		k     heldKey
		token broker.LockToken
	}
	items := make([]item, 0, len(keys))
	for _, k := range keys {
		h := m.held[k]
		h.settling = true
		items = append(items, item{k, h.msg.LockToken})
	}
	c, timeout, n := m.client, m.opts.Timeout, m.opts.Concurrency
	title := fmt.Sprintf("%s %d messages", s.Kind, len(keys))
	cmd := b.start(m, title, pastTense(s.Kind), len(items), func(ctx context.Context, report func(jobEvent)) {
		broker.ForEach(ctx, n, items, func(it item) {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			st := s
			st.Entity, st.Token = it.k.address, it.token
			err := c.Settle(cctx, st)
			k := it.k
			report(jobEvent{ok: err == nil, err: err, label: fmt.Sprintf("sequence number %d", k.seq), key: &k})
		})
	})
	b.holdKeys(m, keys)
	return cmd
}

// holdKeys records the held locks of the job just started.
func (b *bulkWork) holdKeys(m *Model, keys []heldKey) {
	if b.job != nil {
		b.job.keys = keys
	}
}

// renew renews many held locks.
func (b *bulkWork) renew(m *Model, keys []heldKey) tea.Cmd {
	if b.busy(m, "renew") {
		return nil
	}
	type item struct {
		k     heldKey
		token broker.LockToken
	}
	var items []item
	for _, k := range keys {
		h := m.held[k]
		h.renewing = true
		items = append(items, item{k, h.msg.LockToken})
	}
	c, timeout, n := m.client, m.opts.Timeout, m.opts.Concurrency
	defer b.holdKeys(m, keys)
	return b.start(m, fmt.Sprintf("renew %d locks", len(items)), "renewed", len(items), func(ctx context.Context, report func(jobEvent)) {
		broker.ForEach(ctx, n, items, func(it item) {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			until, err := c.RenewLock(cctx, it.k.address, it.token)
			k := it.k
			report(jobEvent{ok: err == nil, err: err, label: fmt.Sprintf("sequence number %d", k.seq), key: &k, until: until})
		})
	})
}

// purge purges an entity's main queue or one of its dead-letter
// sub-queues.
func (b *bulkWork) purge(m *Model, entity string, sub broker.SubQueue) tea.Cmd {
	c, timeout := m.client, m.opts.Timeout
	where := broker.SubQueueAddress(entity, sub)
	return b.start(m, "purge "+where, "message(s) removed", 0, func(ctx context.Context, report func(jobEvent)) {
		cctx, cancel := context.WithTimeout(ctx, 10*timeout)
		defer cancel()
		n, err := c.Purge(cctx, entity, sub)
		if err != nil {
			report(jobEvent{err: err, label: where})
			return
		}
		if n == 0 {
			report(jobEvent{note: "it was empty"})
			return
		}
		report(jobEvent{ok: true, count: int(n), label: where})
	})
}

// resubmitAll resubmits every message of an entity's dead-letter
// queue, then of its transfer dead-letter queue, in batches, until they are
// empty or the work is cancelled (broker.ResubmitFrom, which the command
// line's resubmit shares). Messages that fail are kept locked until the end
// so that they are not received again, then released.
func (b *bulkWork) resubmitAll(m *Model, entity string) tea.Cmd {
	dlq := entity + broker.DeadLetterSuffix
	e, _ := m.currentEntity()
	title := "resubmit " + dlq
	if e.Counts.TransferDeadLettered > 0 {
		title += " and " + broker.SubQueueAddress(entity, broker.SubQueueTransferDeadLetter)
	}
	c, timeout, n := m.client, m.opts.Timeout, m.opts.Concurrency
	return b.start(m, title, "resubmitted", int(e.Counts.Count(broker.CategoryDeadLettered)), func(ctx context.Context, report func(jobEvent)) {
		err := broker.ResubmitFrom(ctx, c, entity, broker.ResubmitOptions{Concurrency: n, Timeout: timeout},
			func(_ string, x *broker.Message, err error) {
				report(jobEvent{ok: err == nil, err: err, label: fmt.Sprintf("sequence number %d", x.SequenceNumber)})
			})
		if err != nil {
			report(jobEvent{err: err, label: "resubmit"})
		}
	})
}
