package model

import (
	"context"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// infoState is the open entity information view. It follows the selected
// entity; its lines are rendered when what they show changes (the entity
// list, the rules, the width, the theme), so a frame only slices them.
type infoState struct {
	path string
	top  int

	// Rules of a subscription read through a broker.RuleReader: source is
	// ui.RulesListed when the endpoint lists them with the entity.
	source   ui.RulesSource
	rules    []broker.Rule
	rulesErr string
	rulesSeq int // numbers the view's reads: the last one counts

	lines []string
	width int
	gen   int  // m.entGen the lines were rendered from
	dirty bool // render again (rules arrived, theme changed)
}

// rulesMsg is the result of reading a subscription's rules for the entity
// information view from, its read number seq.
type rulesMsg struct {
	from  *infoState
	seq   int
	path  string
	rules []broker.Rule
	err   error
}

// openInfo opens the entity information view of the selected entity.
func (m *Model) openInfo() tea.Cmd {
	if m.entity == "" {
		return m.refuse(&m.keys.Info, "no entity selected")
	}
	m.entInfo = &infoState{}
	return m.syncInfo()
}

// syncInfo points the information view at the selected entity when the
// selection changed (or the view just opened), starting to read a
// subscription's rules where the endpoint reads them on request, and
// renders its lines again when what they show changed. Update calls it
// after every message.
func (m *Model) syncInfo() tea.Cmd {
	in := m.entInfo
	if in == nil {
		return nil
	}
	var cmd tea.Cmd
	if in.path != m.entity || in.lines == nil {
		*in = infoState{path: m.entity, source: ui.RulesListed, rulesSeq: in.rulesSeq}
		cmd = m.readRules()
	}
	if in.lines == nil || in.dirty || in.gen != m.entGen || in.width != m.layout().Main.W {
		m.renderInfo()
	}
	return cmd
}

// readRules starts reading the rules of the subscription in the view when
// the endpoint reads them on request (broker.RulesOf): once per opening or
// selection, never on a poll.
func (m *Model) readRules() tea.Cmd {
	in := m.entInfo
	e, _ := m.currentEntity()
	if _, _, isSub := broker.SplitSubscriptionPath(in.path); !isSub && e.Kind != broker.KindSubscription {
		return nil
	}
	rr, ok := broker.RulesOf(m.client)
	if !ok {
		return nil
	}
	in.rulesSeq++
	in.source = ui.RulesLoading
	seq, path, timeout := in.rulesSeq, in.path, m.opts.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		rules, err := rr.SubscriptionRules(ctx, path)
		return rulesMsg{from: in, seq: seq, path: path, rules: rules, err: err}
	}
}

// onRules takes the rules read for the information view; a result for a
// view that has closed (or was opened again) is dropped.
func (m *Model) onRules(msg rulesMsg) {
	if m.entInfo != nil && msg.from == m.entInfo {
		m.entInfo.takeRules(msg)
	}
}

// takeRules takes the rules read for the view; a result for a view that
// has moved on is dropped.
func (in *infoState) takeRules(msg rulesMsg) {
	if msg.seq != in.rulesSeq || msg.path != in.path {
		return
	}
	if msg.err != nil {
		in.source, in.rulesErr = ui.RulesFailed, msg.err.Error()
	} else {
		in.source, in.rules = ui.RulesRead, msg.rules
	}
	in.dirty = true
}

// renderInfo renders the information view's lines from the state.
func (m *Model) renderInfo() {
	in := m.entInfo
	in.render(m.common(), m.entityInfo(in), m.layout().Main.W, m.entGen, m.viewPage())
}

// entityInfo gathers what the information view shows of the selected
// entity.
func (m *Model) entityInfo(in *infoState) ui.EntityInfo {
	e, listed := m.currentEntity()
	info := ui.EntityInfo{
		Entity:        e,
		SettingsKnown: listed && (e.Settings != broker.EntitySettings{} || !e.CreatedAt.IsZero()),
		Why:           m.bar.notice,
		Source:        in.source,
		RulesErr:      in.rulesErr,
	}
	switch {
	case !listed && !m.caps.Supports(broker.CanListEntities):
		info.Why = "this endpoint does not list entities: " + m.caps.Reason(broker.CanListEntities)
	case !listed:
		info.Why = "the entity list has not come yet"
	}
	if in.source == ui.RulesRead {
		info.Rules = in.rules
	} else {
		info.Rules = e.Rules
	}
	if e.Kind == broker.KindTopic {
		for _, s := range m.entities {
			if t, _, ok := broker.SplitSubscriptionPath(s.Path); ok && strings.EqualFold(t, e.Path) {
				info.Subscriptions = append(info.Subscriptions, s)
			}
		}
	}
	return info
}

// render renders the view's lines of info in width cells, from the
// entity list numbered gen; page is how many lines show at once.
func (in *infoState) render(c *ui.Common, info ui.EntityInfo, width, gen, page int) {
	in.width = width
	in.lines = ui.EntityInfoLines(c, info, in.width)
	in.gen, in.dirty = gen, false
	in.top = min(in.top, in.maxTop(page))
}

// maxTop is the last useful scroll position of the view when page lines
// show at once.
func (in *infoState) maxTop(page int) int { return max(0, len(in.lines)-page) }

// infoKey handles the keys that scroll or close the information view;
// other keys fall through to the main actions, most of which are disabled
// while it is open (updateKeybindings).
func (m *Model) infoKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	taken, closed := m.entInfo.update(msg, &m.keys, m.viewPage())
	if closed {
		m.entInfo = nil
	}
	return nil, taken
}

// update takes a key: esc or the info key close the view (closed), the
// moving keys scroll it by page lines; taken is false for the others.
func (in *infoState) update(msg tea.KeyPressMsg, k *keymap.KeyMap, page int) (taken, closed bool) {
	if keymap.Pressed(msg, k.Back) || keymap.Pressed(msg, k.Info) {
		return true, true
	}
	return k.Scroll(msg, &in.top, in.maxTop(page), page), false
}

// scroll moves the view by d lines (the mouse wheel).
func (in *infoState) scroll(d, page int) { in.top = max(0, min(in.maxTop(page), in.top+d)) }

// view is what the view draws: its title line, its one-line key help, its
// lines and the first one shown.
func (in *infoState) view(k *keymap.KeyMap) (title string, help []key.Binding, lines []string, top int) {
	help = []key.Binding{k.Back, k.Down, k.Bottom, k.NextEntity, k.Help, k.Quit}
	return in.path + " › info", help, in.lines, min(in.top, max(0, len(in.lines)-1))
}
