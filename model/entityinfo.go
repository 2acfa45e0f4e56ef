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
func openInfo(m *Model) tea.Cmd {
	if m.entity == "" {
		return m.refuse(&m.keys.Info, "no entity selected")
	}
	m.entInfo = &infoState{}
	return m.entInfo.sync(m)
}

// sync points the view at the selected entity when the selection changed
// (or the view just opened), starting to read a subscription's rules where
// the endpoint reads them on request, and renders its lines again when
// what they show changed. Update calls it after every message; a closed
// view (nil) does nothing.
func (in *infoState) sync(m *Model) tea.Cmd {
	if in == nil {
		return nil
	}
	var cmd tea.Cmd
	if in.path != m.entity || in.lines == nil {
		*in = infoState{path: m.entity, source: ui.RulesListed, rulesSeq: in.rulesSeq}
		cmd = in.readRules(m)
	}
	if l := m.layout(); in.lines == nil || in.dirty || in.gen != m.entGen || in.width != l.Main.W {
		in.render(m.common(), in.shows(m), l.Main.W, m.entGen, viewPage(l))
	}
	return cmd
}

// readRules starts reading the rules of the subscription in the view when
// the endpoint reads them on request (broker.RulesOf): once per opening or
// selection, never on a poll.
func (in *infoState) readRules(m *Model) tea.Cmd {
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

// takeRules takes the rules read for the view; a result for a view that
// has closed (nil), was opened again or has moved on is dropped.
func (in *infoState) takeRules(msg rulesMsg) {
	if in == nil || msg.from != in || msg.seq != in.rulesSeq || msg.path != in.path {
		return
	}
	if msg.err != nil {
		in.source, in.rulesErr = ui.RulesFailed, msg.err.Error()
	} else {
		in.source, in.rules = ui.RulesRead, msg.rules
	}
	in.dirty = true
}

// shows gathers what the view shows of the selected entity.
func (in *infoState) shows(m *Model) ui.EntityInfo {
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

// id names the entity information view.
func (in *infoState) id() overlay { return overInfo }

// isOpen reports whether the view is open (not nil).
func (in *infoState) isOpen() bool { return in != nil }

// modal is false: the keys the view does not take fall through to the
// main actions, most of which are disabled while it is open
// (updateKeybindings).
func (in *infoState) modal() bool { return false }

// key scrolls or closes the view.
func (in *infoState) key(m *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	taken, closed := in.update(msg, &m.keys, viewPage(m.layout()))
	if closed {
		m.entInfo = nil
	}
	return nil, taken
}

// click takes the clicks on the main area, which the view covers.
func (in *infoState) click(m *Model, ms tea.Mouse) (tea.Cmd, bool) {
	return nil, inMainArea(m, ms.X, ms.Y)
}

// wheel scrolls the view.
func (in *infoState) wheel(m *Model, _ tea.Mouse, delta int) (tea.Cmd, bool) {
	in.scroll(delta, viewPage(m.layout()))
	return nil, true
}

// close closes the view.
func (in *infoState) close(m *Model) { m.entInfo = nil }

// frame draws the view, with its own one-line help, in the main area.
func (in *infoState) frame(m *Model, _ *ui.Common, s *ui.Screen) {
	s.DetailOpen = true
	s.DetailTitle, s.Help, s.DetailLines, s.DetailTop = in.view(&m.keys)
}
