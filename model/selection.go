package model

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
)

// paneName names pane i for the status line ("the Dead-lettered pane").
func paneName(i int) string { return fmt.Sprintf("the %s pane", category(i)) }

// selectAll selects every message of the focused pane, all pages and not
// only the rows on screen, honouring the filter: a job pages through the
// pane (the screen stays live, esc cancels) and says how many it selected.
// A second * clears what the first selected.
func (ms *mainScreen) selectAll(m *Model) tea.Cmd {
	p := m.focused()
	if p.allSelected && len(p.selected) > 0 {
		n := len(p.selected)
		p.clearSelection()
		m.setInfo(fmt.Sprintf("selection cleared (%d unselected)", n))
		return nil
	}
	if m.entity == "" {
		return m.refuse(&m.keys.SelectAll, "no entity selected")
	}
	s := m.scope()
	s.only = nil // * selects the whole pane, whatever is selected now
	entity, pane := m.entity, m.focus
	total := 0
	if e, ok := m.currentEntity(); ok && !m.filter.active() && !e.Counts.Unknown && !s.isLoc {
		total = int(e.Counts.Count(category(pane)))
	}
	what := "every message of " + paneName(pane)
	if m.filter.active() {
		what += " that matches the filter"
	}
	c, timeout := m.client, m.opts.Timeout
	cmd := m.bulk.start(m, "select "+what, "selected", total, func(ctx context.Context, report func(jobEvent)) {
		var seqs []int64
		err := s.walk(ctx, c, timeout, func(msgs []*broker.Message) error {
			for _, x := range msgs {
				seqs = append(seqs, x.SequenceNumber)
			}
			if len(msgs) > 0 {
				report(jobEvent{ok: true, count: len(msgs)})
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			report(jobEvent{err: err, label: "select"})
			return
		}
		report(jobEvent{result: seqs})
	})
	if cmd == nil {
		return nil // refused: other bulk work is running
	}
	m.bulk.job.finish = func(j *bulkJob) tea.Cmd {
		seqs, _ := j.result.([]int64)
		switch {
		case j.cancelled:
			m.setInfo("select: cancelled, the selection is unchanged")
		case j.failed > 0:
			m.setErr(fmt.Errorf("select %s: %s", what, j.failures[0]))
		case m.entity != entity:
			m.setInfo("select: the entity changed meanwhile, nothing selected")
		case len(seqs) == 0:
			m.setInfo(fmt.Sprintf("nothing to select: %s is empty", paneName(pane)))
		default:
			p := &m.panes[pane]
			p.clearSelection()
			for _, q := range seqs {
				p.selected[q] = true
			}
			p.allSelected = true
			m.setInfo(fmt.Sprintf("selected %d message(s): %s (%s again clears)", len(seqs), what, m.keys.SelectAll.Help().Key))
		}
		return nil
	}
	return cmd
}

// pruneSelection drops from pane i's selection the messages that a window
// just read shows are gone: a window in sequence order holds every message
// of its category between its first and last row (and every match of the
// filter among them), so a selected one in that range that is not in it
// was removed; an empty pane from the first message on holds nothing. A
// Scheduled window in due order proves nothing of the kind.
func (p *paneState) pruneSelection(i int, count int64, counted bool) {
	if len(p.selected) == 0 {
		return
	}
	if counted && count == 0 && len(p.rows) == 0 {
		p.clearSelection()
		return
	}
	if category(i) == broker.CategoryScheduled {
		return
	}
	if len(p.rows) == 0 {
		if p.top == 0 {
			p.clearSelection()
		}
		return
	}
	lo, hi := p.rows[0].SequenceNumber, p.rows[len(p.rows)-1].SequenceNumber
	if p.top == 0 {
		lo = 0
	}
	shown := make(map[int64]bool, len(p.rows))
	for _, x := range p.rows {
		shown[x.SequenceNumber] = true
	}
	gone := func(q int64) bool { return q >= lo && q <= hi && p.selected[q] && !shown[q] }
	if hi-lo < int64(len(p.selected)) { // the fewer to look at: the range
		for q := lo; q <= hi; q++ {
			if gone(q) {
				delete(p.selected, q)
			}
		}
		return
	}
	for q := range p.selected {
		if gone(q) {
			delete(p.selected, q)
		}
	}
}
