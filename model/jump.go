package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// jumpState is the list of the jump dialog (:): the entities whose names
// match what is typed, best first, and the one enter picks.
type jumpState struct {
	matches []int // indexes into Model.entities
	sel     int
}

// maxJumpRows bounds the matches the jump dialog lists.
const maxJumpRows = 10

// newName marks, in jumpState.matches, the offer to name the typed text
// as an entity (an endpoint without an entity list).
const newName = -1

// openJump opens the jump dialog: typing filters the entities (fuzzy, as
// k9s does), ↑/↓ choose, enter shows the chosen one. On an endpoint that
// cannot list its entities (a generic AMQP broker) it also offers the typed
// text as the name of an entity to watch: a queue, or an address used as it
// is.
func openJump(m *Model) tea.Cmd {
	naming := !m.caps.Supports(broker.CanListEntities)
	if len(m.entities) == 0 && !naming {
		return m.refuse(&m.keys.Jump, "no entities listed yet")
	}
	d := newDialog(dlgJump, "Jump to an entity", m.width, ":")
	d.inputs[0].Placeholder = "type part of a name: ord, ev/aud…"
	d.footer = "enter show · ↑/↓ choose · esc cancel"
	if naming {
		d.title = "Name a queue or an address"
		d.inputs[0].Placeholder = "orders, or an address: /exchange/logs/info"
		d.footer = "enter watch it · ↑/↓ choose · esc cancel"
	}
	d.jump = &jumpState{}
	d.submit = func(d *dialogState) (tea.Cmd, error) {
		j := d.jump
		if len(j.matches) == 0 {
			return nil, &ActionError{Action: "jump", Reason: fmt.Sprintf("no entity matches %q", d.value(0))}
		}
		if j.matches[j.sel] == newName {
			return m.nameEntity(strings.TrimSpace(d.value(0))), nil
		}
		return m.selectEntity(m.entities[j.matches[j.sel]].Path), nil
	}
	m.dialog = d
	d.updateJump(m)
	return nil
}

// updateJump lists the entities that match the jump dialog's text, best
// first; the current entity is chosen while nothing is typed.
func (d *dialogState) updateJump(m *Model) {
	if d.jump == nil {
		return
	}
	j := d.jump
	pattern := strings.TrimSpace(d.value(0))
	type scored struct{ i, score int }
	var all []scored
	for i, e := range m.entities {
		if s, ok := fuzzyScore(pattern, e.Path); ok {
			all = append(all, scored{i, s})
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].score > all[b].score })
	j.matches = j.matches[:0]
	if pattern != "" && !m.caps.Supports(broker.CanListEntities) &&
		!slices.ContainsFunc(m.entities, func(e broker.Entity) bool { return e.Path == pattern }) {
		j.matches = append(j.matches, newName)
	}
	for _, s := range all {
		j.matches = append(j.matches, s.i)
	}
	j.sel = 0
	if pattern == "" {
		for k, i := range j.matches {
			if i != newName && m.entities[i].Path == m.entity {
				j.sel = k
			}
		}
	}
	d.jumpLines(m)
}

// jumpLines renders the jump dialog's list under its input: each match
// with its total and dead-lettered counts, the chosen one marked.
func (d *dialogState) jumpLines(m *Model) {
	j := d.jump
	st := m.styles
	d.after = d.after[:0]
	if len(j.matches) == 0 {
		if !m.caps.Supports(broker.CanListEntities) {
			d.after = append(d.after, st.Faint.Render("this endpoint has no entity list: type a queue name"))
			return
		}
		d.after = append(d.after, st.Faint.Render("no entity matches"))
		return
	}
	first := max(0, min(j.sel-maxJumpRows/2, len(j.matches)-maxJumpRows))
	w := max(10, d.width-15) // "▸ ", the name, a space, 12 cells of counts
	for k := first; k < len(j.matches) && k < first+maxJumpRows; k++ {
		if j.matches[k] == newName {
			line := "watch " + truncateName(ui.Sanitize(strings.TrimSpace(d.value(0))), w) + " (new)"
			if k == j.sel {
				d.after = append(d.after, st.Cursor.Render("▸ "+line))
			} else {
				d.after = append(d.after, "  "+line)
			}
			continue
		}
		e := m.entities[j.matches[k]]
		name := ui.Sanitize(e.Path)
		counts := fmt.Sprintf("Σ%5s X%4s", ui.Count(ui.Depth(e.Counts)), ui.CountOf(e.Counts, broker.CategoryDeadLettered))
		if e.Kind == broker.KindTopic {
			counts = fmt.Sprintf("%12s", "topic")
		}
		line := fmt.Sprintf("%-*s %s", w, truncateName(name, w), counts)
		if k == j.sel {
			d.after = append(d.after, st.Cursor.Render("▸ "+line))
		} else {
			d.after = append(d.after, "  "+line)
		}
	}
	if n := len(j.matches); n > maxJumpRows {
		d.after = append(d.after, st.Faint.Render(fmt.Sprintf("  %d of %d", min(maxJumpRows, n), n)))
	}
}

// nameEntity watches an entity the endpoint cannot list: it joins the
// entity list (kept across refreshes, see keepNamed) and is shown.
func (m *Model) nameEntity(name string) tea.Cmd {
	if name == "" {
		return m.refuse(&m.keys.Jump, "no name typed")
	}
	if !slices.Contains(m.named, name) {
		m.named = append(m.named, name)
	}
	m.keepNamed()
	return m.selectEntity(name)
}

// keepNamed adds to the entity list the entities named by hand (and the
// one shown) that an endpoint without an entity list does not return.
func (m *Model) keepNamed() {
	if m.caps.Supports(broker.CanListEntities) {
		return
	}
	names := m.named
	if m.entity != "" && !slices.Contains(names, m.entity) {
		names = append(slices.Clone(names), m.entity)
	}
	for _, n := range names {
		if slices.ContainsFunc(m.entities, func(e broker.Entity) bool { return e.Path == n }) {
			continue
		}
		// The endpoint does not know the name: its locks are the ones this
		// dashboard holds.
		e := broker.Entity{Path: n, Kind: broker.KindQueue, Counts: broker.Counts{Unknown: true}}
		for _, h := range m.held {
			if h.address == n {
				e.Counts.Locked++
			}
		}
		m.entities = append(m.entities, e)
	}
}

// truncateName cuts a name to w cells from the left, where entity paths
// differ least ("…/Subscriptions/audit").
func truncateName(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	return "…" + string(r[len(r)-w+1:])
}

// jumpKey moves the jump dialog's choice; ok is false for other keys.
func (d *dialogState) jumpKey(m *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	j := d.jump
	switch msg.String() {
	case "up", "ctrl+p", "shift+tab":
		j.sel = max(0, j.sel-1)
	case "down", "ctrl+n", "tab":
		j.sel = min(max(0, len(j.matches)-1), j.sel+1)
	default:
		return nil, false
	}
	d.jumpLines(m)
	return nil, true
}

// fuzzyScore reports whether every character of pattern appears in name in
// order, case-insensitively, and how well: the name starting with the
// pattern first, then the pattern at the start of a word of the name
// (after / - _ . or a space), then anywhere in it, then scattered (where a
// match at a word's start and a run of consecutive characters count more);
// a shorter name wins a tie. An empty pattern matches everything.
func fuzzyScore(pattern, name string) (int, bool) {
	p := []rune(strings.ToLower(pattern))
	n := []rune(strings.ToLower(name))
	if len(p) == 0 {
		return 0, true
	}
	lp, ln := string(p), string(n)
	switch i := strings.Index(ln, lp); {
	case i == 0:
		return 3_000_000 - len(n), true
	case i > 0:
		for j := i; j >= 0; j = indexFrom(ln, lp, j+1) {
			if strings.ContainsRune("/-_. ", rune(ln[j-1])) {
				return 2_000_000 - len(n), true
			}
		}
		return 1_000_000 - len(n), true
	}
	score, k, run := 0, 0, 0
	for i := 0; i < len(n) && k < len(p); i++ {
		if n[i] != p[k] {
			run = 0
			continue
		}
		s := 1
		if i == 0 {
			s += 8
		} else if prev := n[i-1]; prev == '/' || prev == '-' || prev == '_' || prev == '.' || unicode.IsSpace(prev) {
			s += 5
		}
		run++
		s += 2 * (run - 1)
		score += s
		k++
	}
	if k < len(p) {
		return 0, false
	}
	return score*100 - len(n), true
}

// indexFrom returns the index of sub in s at or after from, or -1.
func indexFrom(s, sub string, from int) int {
	if from >= len(s) {
		return -1
	}
	if i := strings.Index(s[from:], sub); i >= 0 {
		return from + i
	}
	return -1
}
