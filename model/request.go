package model

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// searchPage is the most messages one step of the request search browses.
const searchPage = 200

// requestSearch is the search for the request of a reply: the message
// whose MessageId is the reply's CorrelationId. It browses (never locks)
// one page per command, entity after entity and category after category,
// so that Update sees its progress and esc can stop it between two pages.
type requestSearch struct {
	id     int
	corrID string
	// from is the reply itself (its entity address and sequence number),
	// which the search skips when its MessageId is its CorrelationId.
	fromAddr string
	fromSeq  int64
	// plan is the entities to search, likely ones first; at is the entity
	// being searched, cat its category (a pane index), next the
	// FromSequence of the next page.
	plan    []string
	likely  int // how many of plan came from learned ReplyTo links
	at      int
	cat     int
	next    int64
	scanned int
	limit   int
	start   time.Time
	ctx     context.Context
	cancel  context.CancelFunc
}

// searchStepMsg is the result of one page of the request search.
type searchStepMsg struct {
	id   int
	msgs []*broker.Message
	// asked is how many messages the page asked for: fewer back means the
	// category has no more.
	asked int
	err   error
}

// findRequest starts the search for the request of the target message.
func (m *Model) findRequest() tea.Cmd {
	cur, pane := m.target()
	if cur == nil {
		return m.refuse(&m.keys.Request, "no message here")
	}
	if cur.CorrelationID == "" {
		return m.refuse(&m.keys.Request, "the message has no CorrelationId")
	}
	if m.search != nil {
		return m.refuse(&m.keys.Request, "a search is running already (esc cancels it)")
	}
	plan, likely := m.searchPlan(m.entity)
	ctx, cancel := context.WithCancel(context.Background())
	m.searchSeq++
	m.search = &requestSearch{id: m.searchSeq, corrID: cur.CorrelationID, fromAddr: msgAddress(m.entity, pane, cur),
		fromSeq: cur.SequenceNumber, plan: plan, likely: likely, limit: m.opts.SearchScan, start: m.now, ctx: ctx, cancel: cancel}
	return m.searchStep()
}

// searchPlan lists the entities to search for the request of a reply in
// entity: first those whose messages were seen with a ReplyTo naming it
// (or its topic), then every queue and subscription of the entity list
// (the reply's own entity among them), each once.
func (m *Model) searchPlan(entity string) (plan []string, likely int) {
	seen := map[string]bool{}
	add := func(p string) {
		if k := strings.ToLower(p); !seen[k] {
			seen[k] = true
			plan = append(plan, p)
		}
	}
	keys := []string{strings.ToLower(entity)}
	if topic, _, ok := strings.Cut(entity, "/Subscriptions/"); ok {
		keys = append(keys, strings.ToLower(topic))
	}
	for _, k := range keys {
		for _, src := range m.replySources[k] {
			add(src)
		}
	}
	likely = len(plan)
	for _, e := range m.entities {
		if e.Kind != broker.KindTopic {
			add(e.Path)
		}
	}
	add(entity)
	return plan, likely
}

// learnReplyTo records, from a window of entity, which entities its
// messages want their replies in: the request search looks in those first.
// The work is bounded by the window; the map by the entities squared.
func (m *Model) learnReplyTo(entity string, rows []*broker.Message) {
	for _, x := range rows {
		to := m.replyTarget(x.ReplyTo)
		if to == "" || strings.EqualFold(to, entity) {
			continue
		}
		k := strings.ToLower(to)
		known := false
		for _, s := range m.replySources[k] {
			if s == entity {
				known = true
				break
			}
		}
		if !known {
			if m.replySources == nil {
				m.replySources = make(map[string][]string)
			}
			m.replySources[k] = append(m.replySources[k], entity)
		}
	}
}

// replyTarget resolves a ReplyTo address to a known entity of any kind
// (a topic too: its replies land in its subscriptions), or "".
func (m *Model) replyTarget(addr string) string {
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

// searchStep browses the next page of the search.
func (m *Model) searchStep() tea.Cmd {
	s := m.search
	c, timeout, id := m.client, m.opts.Timeout, s.id
	req := broker.BrowseRequest{Entity: s.plan[s.at], Category: category(s.cat), FromSequence: s.next,
		Max: min(searchPage, s.limit-s.scanned)}
	parent := s.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(parent, timeout)
		defer cancel()
		msgs, err := c.Browse(ctx, req)
		return searchStepMsg{id: id, msgs: msgs, asked: req.Max, err: err}
	}
}

// onSearchStep takes one page: the request opens in the detail view when
// it is there; otherwise the search moves on, or ends with its result.
func (m *Model) onSearchStep(msg searchStepMsg) tea.Cmd {
	s := m.search
	if s == nil || msg.id != s.id {
		return nil // cancelled, or an earlier search
	}
	entity := s.plan[s.at]
	if msg.err != nil {
		if broker.CodeOf(msg.err) != broker.CodeNotFound {
			m.endSearch()
			m.setErr(fmt.Errorf("find the request of a reply: browsing %s › %s: %w", entity, category(s.cat), msg.err))
			return nil
		}
		// The entity went away since the list: search the others.
		s.cat = numPanes - 1
		msg.msgs, msg.asked = nil, 1
	}
	s.scanned += len(msg.msgs)
	for _, x := range msg.msgs {
		if x.MessageID != s.corrID {
			continue
		}
		if x.SequenceNumber == s.fromSeq && strings.EqualFold(msgAddress(entity, s.cat, x), s.fromAddr) {
			continue // the reply itself
		}
		return m.openRequest(entity, s.cat, x)
	}
	if len(msg.msgs) >= msg.asked && len(msg.msgs) > 0 {
		s.next = msg.msgs[len(msg.msgs)-1].SequenceNumber + 1
	} else {
		s.next = 0
		s.cat++
		if s.cat == numPanes {
			s.cat = 0
			s.at++
		}
	}
	switch {
	case s.at == len(s.plan):
		m.endSearch()
		m.setInfo(fmt.Sprintf("request %q: not found among %d messages in %d entities", ui.Sanitize(s.corrID), s.scanned, len(s.plan)))
		return nil
	case s.scanned >= s.limit:
		m.endSearch()
		m.setInfo(fmt.Sprintf("request %q: not found among %d messages in %d of %d entities: stopped at the search limit of %d messages",
			ui.Sanitize(s.corrID), s.scanned, s.searched(), len(s.plan), s.limit))
		return nil
	}
	return m.searchStep()
}

// openRequest shows the request found in entity, pane i, in the detail
// view; esc comes back to where the search started from.
func (m *Model) openRequest(entity string, i int, x *broker.Message) tea.Cmd {
	s := m.search
	m.endSearch()
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
	m.detail = &detailState{pane: i, address: msgAddress(entity, i, x), msg: x}
	m.rerenderDetail()
	from.opened = m.detail
	m.jumps = append(m.jumps, from)
	m.setInfo(fmt.Sprintf("request %q: %s › %s › %d, found among %d messages (esc goes back)",
		ui.Sanitize(s.corrID), entity, category(i), x.SequenceNumber, s.scanned))
	return tea.Batch(m.requestRefresh(), m.sessionStateCmd(x), m.historyCmd())
}

// cancelSearch stops the search (esc).
func (m *Model) cancelSearch() {
	s := m.search
	m.endSearch()
	m.setInfo(fmt.Sprintf("request %q: search cancelled after %d messages in %d of %d entities",
		ui.Sanitize(s.corrID), s.scanned, s.searched(), len(s.plan)))
}

// searched is how many entities the search has looked into, the one it is
// in included.
func (s *requestSearch) searched() int {
	if s.cat > 0 || s.next > 0 {
		return s.at + 1
	}
	return s.at
}

// endSearch forgets the search and cancels its browse in flight.
func (m *Model) endSearch() {
	if m.search != nil {
		m.search.cancel()
		m.search = nil
	}
}

// searchDialog is the progress of the search, drawn over the screen.
func (m *Model) searchDialog(c *ui.Common) ui.Dialog {
	s := m.search
	return ui.SearchDialog(c, ui.SearchProgress{
		CorrelationID: s.corrID, Entity: s.plan[s.at], Category: category(s.cat).String(),
		Scanned: s.scanned, Limit: s.limit, Entities: len(s.plan), At: s.at + 1, Likely: s.at < s.likely,
		Elapsed: m.now.Sub(s.start),
	})
}
