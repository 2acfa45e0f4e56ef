package model

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// requestSearch is the search for the request of a reply in progress
// (broker.RequestSearch): one page per command, so that Update sees its
// progress and esc can stop it between two pages.
type requestSearch struct {
	*broker.RequestSearch
	id     int
	likely int // how many of the plan came from learned ReplyTo links
	start  time.Time
	ctx    context.Context
	cancel context.CancelFunc
}

// requestFinder finds the request of a reply: the search in progress (nil
// for none), drawn as a progress box over every view (mainScreen.frame),
// the count that numbers searches, so that a page of an ended one is
// dropped, and sources, which maps an entity (lower case) to the entities
// whose messages were seen asking for replies in it.
type requestFinder struct {
	search  *requestSearch
	seq     int
	sources map[string][]string
}

// searchStepMsg is the result of one page of the request search.
type searchStepMsg struct {
	id   int
	msgs []*broker.Message
	err  error
}

// start starts the search for the request of the target message.
func (f *requestFinder) start(m *Model) tea.Cmd {
	cur, pane := m.target()
	if cur == nil {
		return m.refuse(&m.keys.Request, "no message here")
	}
	if cur.CorrelationID == "" {
		return m.refuse(&m.keys.Request, "the message has no CorrelationId")
	}
	if f.search != nil {
		return m.refuse(&m.keys.Request, "a search is running already (esc cancels it)")
	}
	plan, likely := f.plan(m, m.entity)
	ctx, cancel := context.WithCancel(m.life)
	f.seq++
	f.search = &requestSearch{RequestSearch: &broker.RequestSearch{CorrelationID: cur.CorrelationID,
		FromAddress: msgAddress(m.entity, pane, cur), FromSequence: cur.SequenceNumber, Plan: plan, Limit: m.opts.SearchScan},
		id: f.seq, likely: likely, start: m.now, ctx: ctx, cancel: cancel}
	return f.step(m)
}

// plan lists the entities to search for the request of a reply in
// entity (broker.RequestSearchPlan): those learned from ReplyTo links
// first, then the entity list.
func (f *requestFinder) plan(m *Model, entity string) (plan []string, likely int) {
	return broker.RequestSearchPlan(entity, f.sources, m.entities)
}

// learn records, from a window of entity, which entities its
// messages want their replies in: the request search looks in those first.
// The work is bounded by the window; the map by the entities squared.
func (f *requestFinder) learn(m *Model, entity string, rows []*broker.Message) {
	for _, x := range rows {
		to := f.target(m, x.ReplyTo)
		if to == "" || strings.EqualFold(to, entity) {
			continue
		}
		k := strings.ToLower(to)
		known := false
		for _, s := range f.sources[k] {
			if s == entity {
				known = true
				break
			}
		}
		if !known {
			if f.sources == nil {
				f.sources = make(map[string][]string)
			}
			f.sources[k] = append(f.sources[k], entity)
		}
	}
}

// target resolves a ReplyTo address to a known entity of any kind
// (a topic too: its replies land in its subscriptions), or "".
func (f *requestFinder) target(m *Model, addr string) string {
	if e := m.entityNamed(addr); e != "" {
		return e
	}
	addr = strings.TrimSpace(addr)
	if i := strings.Index(addr, "://"); i >= 0 {
		rest := addr[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			addr = rest[j+1:]
		}
	}
	for _, e := range m.entities {
		if e.Kind == broker.KindTopic && strings.EqualFold(e.Path, addr) {
			return e.Path
		}
	}
	return ""
}

// step browses the next page of the search.
func (f *requestFinder) step(m *Model) tea.Cmd {
	s := f.search
	c, timeout, id := m.client, m.opts.Timeout, s.id
	req := s.Next()
	parent := s.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(parent, timeout)
		defer cancel()
		msgs, err := c.Browse(ctx, req)
		return searchStepMsg{id: id, msgs: msgs, err: err}
	}
}

// onStep takes one page: the request opens in the detail view when
// it is there; otherwise the search moves on, or ends with its result.
func (f *requestFinder) onStep(m *Model, msg searchStepMsg) tea.Cmd {
	s := f.search
	if s == nil || msg.id != s.id {
		return nil // cancelled, or an earlier search
	}
	step := s.Take(msg.msgs, msg.err)
	switch {
	case step.Err != nil:
		f.end()
		m.setErr(fmt.Errorf("find the request of a reply: browsing %s › %s: %w", step.Entity, step.Category, step.Err))
		return nil
	case step.Found != nil:
		return f.open(m, step.Entity, slices.Index(broker.Categories[:], step.Category), step.Found)
	case step.Done && step.Limited:
		f.end()
		m.setInfo(fmt.Sprintf("request %q: not found among %d messages in %d of %d entities: stopped at the search limit of %d messages",
			ui.Sanitize(s.CorrelationID), s.Scanned(), s.Searched(), len(s.Plan), s.Limit))
		return nil
	case step.Done:
		f.end()
		m.setInfo(fmt.Sprintf("request %q: not found among %d messages in %d entities", ui.Sanitize(s.CorrelationID), s.Scanned(), len(s.Plan)))
		return nil
	}
	return f.step(m)
}

// open shows the request found in entity, pane i, in the detail
// view; esc comes back to where the search started from.
func (f *requestFinder) open(m *Model, entity string, i int, x *broker.Message) tea.Cmd {
	s := f.search
	f.end()
	from := jump{entity: m.entity, focus: m.focus, filter: m.filter, detail: m.detail,
		top: m.focused().top, seq: -1}
	if cur := m.focused().current(); cur != nil {
		from.seq = cur.SequenceNumber
	}
	m.filter = filterSpec{}
	m.switchEntity(entity)
	for k := range m.panes {
		m.panes[k].reset()
	}
	m.focus = i
	p := &m.panes[i]
	p.top, p.pos, p.wantSeq = x.SequenceNumber, 0, x.SequenceNumber
	m.detail = newDetail(i, msgAddress(entity, i, x), x)
	m.detail.rerender(m)
	from.opened = m.detail
	m.jumps = append(m.jumps, from)
	m.setInfo(fmt.Sprintf("request %q: %s › %s › %d, found among %d messages (esc goes back)",
		ui.Sanitize(s.CorrelationID), entity, category(i), x.SequenceNumber, s.Scanned()))
	return tea.Batch(m.requestRefresh(), m.detail.readState(m), m.detail.historyCmd(m))
}

// cancel stops the search (esc).
func (f *requestFinder) cancel(m *Model) {
	s := f.search
	f.end()
	m.setInfo(fmt.Sprintf("request %q: search cancelled after %d messages in %d of %d entities",
		ui.Sanitize(s.CorrelationID), s.Scanned(), s.Searched(), len(s.Plan)))
}

// end forgets the search and cancels its browse in flight.
func (f *requestFinder) end() {
	if f.search != nil {
		f.search.cancel()
		f.search = nil
	}
}

// dialog is the progress of the search at now, drawn over the screen.
func (s *requestSearch) dialog(c *ui.Common, now time.Time) ui.Dialog {
	return ui.SearchDialog(c, ui.SearchProgress{
		CorrelationID: s.CorrelationID, Entity: s.Entity(), Category: s.Category().String(),
		Scanned: s.Scanned(), Limit: s.Limit, Entities: len(s.Plan), At: s.At() + 1, Likely: s.At() < s.likely,
		Elapsed: now.Sub(s.start),
	})
}
