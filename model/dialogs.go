package model

import (
	"fmt"
	"time"

	"github.com/charmbracelet/x/ansi"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// dialogKind says which dialog is open.
type dialogKind uint8

const (
	dlgDeadLetter dialogKind = iota
	dlgCompose
	dlgPurge
	dlgFilter
	dlgLockMany
	dlgConfirm
	dlgJump
)

// dialogState is an open dialog: labelled text inputs, an optional body
// text area, static lines, and what enter does.
type dialogState struct {
	kind   dialogKind
	title  string
	labels []string
	inputs []textinput.Model
	body   *textarea.Model
	focus  int // index of the focused input; len(inputs) is the body
	text   []string
	err    string
	footer string
	width  int
	// submit runs on enter (ctrl+s in compose); it returns an error to show
	// in the dialog, or nil to close it.
	submit func(d *dialogState) (tea.Cmd, error)
	// onTab, when set, is what tab does instead of moving the focus.
	onTab func(d *dialogState)
	// live, when set, writes the dialog's text again from the state after
	// every message the model takes (counts, lock times).
	live func(d *dialogState)
	// holds are the held locks the dialog is about: they are renewed
	// while it is open (autoRenew), so that typing takes the time it takes.
	holds []heldKey
	// purge: the sub-queue to purge (tab toggles).
	sub broker.SubQueue
	// compose: the message being edited, if any; prefill holds the text an
	// input was given from it (sanitised for the screen) and origVal the
	// original value, which is used when the text is left unchanged.
	orig        *broker.Message
	prefill     map[int]string
	origVal     map[int]string
	bodyPrefill string
	// after are lines drawn under the inputs (the jump dialog's list);
	// jump is the jump dialog's state.
	after []string
	jump  *jumpState
	// selected marks inputs whose whole text is selected, as it is when a
	// filled input gets the focus: typing replaces it, backspace or delete
	// clears it, a movement key ends the selection and edits it.
	selected map[int]bool
}

// selectFocused selects the whole text of the focused input, if it has any.
func (d *dialogState) selectFocused() {
	if d.focus >= len(d.inputs) {
		return
	}
	if d.selected == nil {
		d.selected = map[int]bool{}
	}
	d.selected[d.focus] = d.inputs[d.focus].Value() != ""
}

// replaceSelection applies msg to a selected input: a key that types text
// (or a paste) replaces the selection, backspace and delete clear it
// (done), and any other key ends the selection and then does what it does.
func (d *dialogState) replaceSelection(msg tea.Msg) (done bool) {
	if d.focus >= len(d.inputs) || !d.selected[d.focus] {
		return false
	}
	switch msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg:
	default:
		return false // a cursor blink changes nothing
	}
	d.selected[d.focus] = false
	in := &d.inputs[d.focus]
	switch msg := msg.(type) {
	case tea.PasteMsg:
		in.SetValue("")
	case tea.KeyPressMsg:
		switch {
		case msg.String() == "backspace" || msg.String() == "delete" || msg.String() == "ctrl+h":
			in.SetValue("")
			return true
		case msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0:
			in.SetValue("")
		}
	}
	return false
}

// fill puts an original value into input i, sanitised for the screen.
func (d *dialogState) fill(i int, v string) {
	shown := ui.Sanitize(v)
	d.inputs[i].SetValue(shown)
	if d.prefill == nil {
		d.prefill, d.origVal = map[int]string{}, map[int]string{}
	}
	d.prefill[i], d.origVal[i] = d.inputs[i].Value(), v
}

// field returns the value of input i: the original value when the input
// still shows what fill put there, else what was typed.
func (d *dialogState) field(i int) string {
	v := d.value(i)
	if p, ok := d.prefill[i]; ok && v == p {
		return d.origVal[i]
	}
	return v
}

// newDialog returns a dialog with one text input per label.
func newDialog(kind dialogKind, title string, width int, labels ...string) *dialogState {
	d := &dialogState{kind: kind, title: title, labels: labels}
	for range labels {
		ti := textinput.New()
		ti.Prompt = ""
		ti.CharLimit = 4096
		st := ti.Styles()
		st.Cursor.Blink = false // a steady cursor: no timers, less output over SSH
		ti.SetStyles(st)
		d.inputs = append(d.inputs, ti)
	}
	d.setWidth(width)
	if len(d.inputs) > 0 {
		d.inputs[0].Focus()
	}
	return d
}

// setWidth sizes the dialog for a screen width.
func (d *dialogState) setWidth(screen int) {
	d.width = min(72, max(10, screen-ui.DialogMargin))
	lw := d.labelWidth()
	for i := range d.inputs {
		d.inputs[i].SetWidth(max(8, d.width-lw-2))
	}
	if d.body != nil {
		d.body.SetWidth(d.width)
	}
}

func (d *dialogState) labelWidth() int {
	w := 0
	for _, l := range d.labels {
		w = max(w, len(l))
	}
	return w + 1
}

// value returns the text of input i.
func (d *dialogState) value(i int) string { return d.inputs[i].Value() }

// fields counts the focusable fields.
func (d *dialogState) fields() int {
	n := len(d.inputs)
	if d.body != nil {
		n++
	}
	return n
}

// setFocus focuses field i.
func (d *dialogState) setFocus(i int) tea.Cmd {
	n := d.fields()
	if n == 0 {
		return nil
	}
	d.focus = (i%n + n) % n
	for k := range d.inputs {
		d.inputs[k].Blur()
	}
	if d.body != nil {
		d.body.Blur()
	}
	if d.focus < len(d.inputs) {
		d.inputs[d.focus].CursorEnd()
		d.selectFocused()
		return d.inputs[d.focus].Focus()
	}
	return d.body.Focus()
}

// updateInputs passes a message to the focused field.
func (d *dialogState) updateInputs(msg tea.Msg) tea.Cmd {
	if d.replaceSelection(msg) {
		return nil
	}
	var cmd tea.Cmd
	switch {
	case d.focus < len(d.inputs):
		d.inputs[d.focus], cmd = d.inputs[d.focus].Update(msg)
	case d.body != nil:
		var b textarea.Model
		b, cmd = d.body.Update(msg)
		d.body = &b
	}
	return cmd
}

// view renders the dialog for the screen.
func (d *dialogState) view(c *ui.Common) ui.Dialog {
	st := c.Styles
	var lines []string
	lines = append(lines, d.text...)
	lw := d.labelWidth()
	fw := max(1, d.width-lw-2)
	for i, in := range d.inputs {
		label := st.Label.Render(fmt.Sprintf("%-*s", lw, d.labels[i]))
		field := in.View()
		var hint []string
		if ph := in.Placeholder; in.Value() == "" && ansi.StringWidth(ph) >= fw {
			// A hint longer than the field: the focused field shows it
			// whole under itself, the others cut it, marked.
			if i == d.focus {
				in.Placeholder = ""
				field = in.View()
				for _, l := range ui.Wrap(ph, max(10, d.width-lw-1)) {
					hint = append(hint, strings.Repeat(" ", lw+1)+st.Faint.Render(l))
				}
			} else {
				field = st.Faint.Render(ansi.Truncate(ph, fw-1, "…"))
			}
		}
		if d.selected[i] {
			field = st.Cursor.Render(ansi.Truncate(in.Value(), fw, "…"))
		}
		lines = append(lines, label+" "+field)
		lines = append(lines, hint...)
	}
	if d.body != nil {
		lines = append(lines, st.Label.Render("Body"))
		lines = append(lines, strings.Split(d.body.View(), "\n")...)
	}
	lines = append(lines, d.after...)
	return ui.Dialog{Title: d.title, Lines: lines, Error: d.err, Footer: d.footer, Width: d.width}
}

// dialogAct is what a key did to a dialog, for the root model to follow.
type dialogAct uint8

const (
	// dialogKept: the key moved the focus, or did nothing.
	dialogKept dialogAct = iota
	// dialogEdited: the key went to the focused field.
	dialogEdited
	// dialogClosed: esc, the dialog closes without submitting.
	dialogClosed
	// dialogSubmitted: the dialog asks to be submitted (enter on the last
	// input, ctrl+s, y in a confirmation).
	dialogSubmitted
)

// update takes a key: tab and shift+tab move the focus (or do the dialog's
// onTab), enter moves to the next input or submits, esc closes, and the
// other keys go to the focused field; act says which.
func (d *dialogState) update(msg tea.KeyPressMsg) (tea.Cmd, dialogAct) {
	switch msg.String() {
	case "esc":
		return nil, dialogClosed
	case "tab":
		if d.onTab != nil {
			d.onTab(d)
			return nil, dialogKept
		}
		return d.setFocus(d.focus + 1), dialogKept
	case "shift+tab":
		return d.setFocus(d.focus - 1), dialogKept
	case "ctrl+s":
		return nil, dialogSubmitted
	case "enter":
		if d.body != nil && d.focus == len(d.inputs) {
			break // a newline in the body
		}
		if d.kind == dlgCompose && d.focus < d.fields()-1 {
			return d.setFocus(d.focus + 1), dialogKept
		}
		if d.focus < len(d.inputs)-1 {
			return d.setFocus(d.focus + 1), dialogKept
		}
		return nil, dialogSubmitted
	}
	if d.kind == dlgConfirm {
		if msg.String() == "y" {
			return nil, dialogSubmitted
		}
		return nil, dialogKept
	}
	return d.updateInputs(msg), dialogEdited
}

// run runs the dialog's submit: done is false when it refused, its error
// then shown in the dialog. A dialog without submit is done.
func (d *dialogState) run() (cmd tea.Cmd, done bool) {
	if d.submit == nil {
		return nil, true
	}
	cmd, err := d.submit(d)
	if err != nil {
		d.err = err.Error()
		return nil, false
	}
	return cmd, true
}

// submitIn runs the dialog's submit and closes it in m when done
// (unless the submit opened another one); an error stays in the dialog.
func (d *dialogState) submitIn(m *Model) tea.Cmd {
	cmd, done := d.run()
	if done && m.dialog == d {
		m.dialog = nil
	}
	return cmd
}

// id names the dialogs.
func (d *dialogState) id() overlay { return overDialog }

// isOpen reports whether a dialog is open (not nil).
func (d *dialogState) isOpen() bool { return d != nil }

// modal is true: a dialog keeps every key and click.
func (d *dialogState) modal() bool { return true }

// key gives a key to the dialog (the jump dialog's list takes its own
// first) and follows what it did: esc closes it, a submit runs.
func (d *dialogState) key(m *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if d.kind == dlgJump {
		if cmd, ok := d.jumpKey(m, msg); ok {
			return cmd, true
		}
	}
	cmd, act := d.update(msg)
	switch act {
	case dialogClosed:
		m.dialog = nil
	case dialogSubmitted:
		return d.submitIn(m), true
	case dialogEdited:
		if d.kind == dlgJump {
			d.updateJump(m)
		}
	}
	return cmd, true
}

// click takes every click, and does nothing.
func (d *dialogState) click(*Model, tea.Mouse) (tea.Cmd, bool) { return nil, true }

// wheel takes the wheel, and does nothing.
func (d *dialogState) wheel(*Model, tea.Mouse, int) (tea.Cmd, bool) { return nil, true }

// close closes the dialog without submitting it.
func (d *dialogState) close(m *Model) { m.dialog = nil }

// frame draws the dialog over everything.
func (d *dialogState) frame(_ *Model, c *ui.Common, s *ui.Screen) {
	v := d.view(c)
	s.Dialog = &v
}

// openDeadLetter asks for the reason and description of a dead-lettering.
func openDeadLetter(m *Model) tea.Cmd {
	keys, why := m.heldTargets()
	if len(keys) == 0 {
		return m.refuse(&m.keys.DeadLetter, why)
	}
	title := fmt.Sprintf("Dead-letter sequence number %d", keys[0].seq)
	if len(keys) > 1 {
		title = fmt.Sprintf("Dead-letter %d messages", len(keys))
	}
	d := newDialog(dlgDeadLetter, title, m.width, "Reason", "Description")
	if w := m.caps.Warning(broker.CanDeadLetter); w != "" {
		for _, l := range ui.Wrap("⚠ "+w, d.width) {
			d.text = append(d.text, m.styles.Error.Render(l))
		}
	}
	d.inputs[0].Placeholder = "e.g. InvalidPayload"
	d.footer = "enter next/confirm · tab next field · esc cancel"
	d.holds = keys
	intro := d.text
	d.live = func(d *dialogState) { d.text = append(slices.Clip(intro), holdText(m, d.holds)...) }
	d.live(d)
	d.submit = func(d *dialogState) (tea.Cmd, error) {
		reason := strings.TrimSpace(d.value(0))
		if reason == "" {
			return nil, &ActionError{Action: "dead-letter", Reason: "a reason is required"}
		}
		s := broker.Settlement{Kind: broker.DeadLetter, Reason: reason, Description: strings.TrimSpace(d.value(1))}
		return m.settle(&m.keys.DeadLetter, s), nil
	}
	m.dialog = d
	return nil
}

// openLockMany asks how many messages to lock.
func openLockMany(m *Model) tea.Cmd {
	d := newDialog(dlgLockMany, "Lock the next N messages", m.width, "N")
	d.inputs[0].SetValue(strconv.Itoa(max(m.opts.LockCount, 10)))
	d.inputs[0].CursorEnd()
	d.selectFocused()
	d.footer = "enter lock · esc cancel"
	d.submit = func(d *dialogState) (tea.Cmd, error) {
		n, err := strconv.Atoi(strings.TrimSpace(d.value(0)))
		if err != nil || n < 1 || n > 5000 {
			return nil, &ActionError{Action: "lock next N", Reason: "N must be a number from 1 to 5000"}
		}
		return m.lock(n), nil
	}
	m.dialog = d
	return nil
}

// openFilter asks for a filter.
func openFilter(m *Model) tea.Cmd {
	d := newDialog(dlgFilter, "Filter", m.width, "Filter")
	d.inputs[0].SetValue(m.filter.Raw())
	d.inputs[0].CursorEnd()
	d.selectFocused()
	d.inputs[0].Placeholder = "text, or Name=value (MessageId, Subject, an application property…)"
	d.footer = "enter apply (empty clears) · esc cancel"
	d.submit = func(d *dialogState) (tea.Cmd, error) {
		f := parseFilter(d.value(0))
		if f == m.filter {
			return nil, nil
		}
		m.filter = f
		for i := range m.panes {
			m.panes[i].reset()
		}
		if f.active() {
			m.setInfo("filter: " + f.String())
		} else {
			m.setInfo("filter cleared")
		}
		return m.requestRefresh(), nil
	}
	m.dialog = d
	return nil
}

// purgeText says what a purge of entity's sub-queue removes: how many
// messages (the latest counts), and, when the selection of the focused
// pane or the last export covered fewer of them, that in words.
func purgeText(m *Model, entity string, sub broker.SubQueue) []string {
	what := "every message of the main queue of"
	switch sub {
	case broker.SubQueueDeadLetter:
		what = "every message of the dead-letter queue of"
	case broker.SubQueueTransferDeadLetter:
		what = "every message of the transfer dead-letter queue of"
	}
	lines := []string{"This removes " + what, "  " + ui.Sanitize(entity)}
	e, ok := m.currentEntity()
	if !ok || e.Counts.Unknown {
		lines = append(lines, m.styles.Error.Render("How many it removes is not known: this endpoint does not count its messages."))
	} else {
		n := e.Counts.Active + e.Counts.Locked + e.Counts.Deferred + e.Counts.Scheduled
		switch sub {
		case broker.SubQueueDeadLetter:
			n = e.Counts.DeadLettered
		case broker.SubQueueTransferDeadLetter:
			n = e.Counts.TransferDeadLettered
		}
		said := fmt.Sprintf("%d will be removed", n)
		var warn []string
		if k := len(m.focused().selected); k > 0 && int64(k) < n && (sub == broker.SubQueueMain) == (category(m.focus) != broker.CategoryDeadLettered) {
			warn = append(warn, fmt.Sprintf("only %d are selected: a purge removes them all, not the selection", k))
		}
		if le := m.lastExport; n > 0 {
			switch {
			case le == nil || le.entity != entity:
				warn = append(warn, "none was exported (x exports a pane)")
			case int64(le.bySub[sub]) < n:
				warn = append(warn, fmt.Sprintf("the last export held %d", le.bySub[sub]))
			default:
				said += fmt.Sprintf("; the last export held %d", le.bySub[sub])
			}
		}
		if len(warn) > 0 {
			lines = append(lines, m.styles.Error.Render(said+"; "+strings.Join(warn, "; ")+"."))
		} else {
			lines = append(lines, said+".")
		}
	}
	return append(lines, "Type the entity name to confirm (tab: main / dead-letter / transfer dead-letter queue).")
}

// openPurge asks to confirm a purge by typing the entity's name.
func openPurge(m *Model) tea.Cmd {
	if m.entity == "" {
		return m.refuse(&m.keys.Purge, "no entity selected")
	}
	d := newDialog(dlgPurge, "Purge", m.width, "Name")
	if category(m.focus) == broker.CategoryDeadLettered {
		d.sub = broker.SubQueueDeadLetter
		if cur, _ := m.target(); cur != nil && cur.SubQueue == broker.SubQueueTransferDeadLetter {
			d.sub = broker.SubQueueTransferDeadLetter
		}
	}
	entity := m.entity
	d.live = func(d *dialogState) { d.text = purgeText(m, entity, d.sub) }
	d.live(d)
	d.footer = "enter purge · tab switch queue · esc cancel"
	d.onTab = func(d *dialogState) {
		d.sub = (d.sub + 1) % broker.SubQueue(len(deadLetterQueues)+1)
		d.live(d)
	}
	d.submit = func(d *dialogState) (tea.Cmd, error) {
		if strings.TrimSpace(d.value(0)) != entity {
			return nil, &ActionError{Action: "purge", Reason: fmt.Sprintf("the name typed is not %q", entity)}
		}
		return m.bulk.purge(m, entity, d.sub), nil
	}
	m.dialog = d
	return m.requestRefresh() // the counts the dialog states, fresh
}

// openResubmitAll asks to confirm resubmitting a whole dead-letter queue.
func openResubmitAll(m *Model) tea.Cmd {
	if m.entity == "" {
		return m.refuse(&m.keys.ResubmitAll, "no entity selected")
	}
	e, _ := m.currentEntity()
	d := newDialog(dlgConfirm, "Resubmit the whole dead-letter queue", m.width)
	d.text = []string{
		fmt.Sprintf("Send every message of %s%s (%d now)", ui.Sanitize(m.entity), broker.DeadLetterSuffix, e.Counts.DeadLettered),
		"back to " + ui.Sanitize(broker.ResubmitTarget(m.entity)) + ", each copy accepted before its original is removed.",
	}
	if n := e.Counts.TransferDeadLettered; n > 0 {
		d.text = slices.Insert(d.text, 1, fmt.Sprintf("and of %s%s (%d now)", ui.Sanitize(m.entity), broker.TransferDeadLetterSuffix, n))
	}
	d.footer = "enter or y start · esc cancel"
	entity := m.entity
	d.submit = func(*dialogState) (tea.Cmd, error) { return m.bulk.resubmitAll(m, entity), nil }
	m.dialog = d
	return nil
}

// holdText says, for a dialog about held locks, that they are renewed
// while it is open and how long the first has left, or that one was lost.
func holdText(m *Model, keys []heldKey) []string {
	for _, k := range keys {
		if m.held[k] == nil {
			return []string{m.styles.Error.Render(fmt.Sprintf("The lock on sequence number %d is gone (expired or lost): this will fail for it.", k.seq))}
		}
	}
	h := m.held[keys[0]]
	what := "Its lock is"
	if len(keys) > 1 {
		what = "Their locks are"
	}
	left := max(0, h.msg.LockedUntil.Sub(m.now))
	return []string{m.styles.Faint.Render(fmt.Sprintf("%s renewed while this dialog is open (%s left).", what, ui.Short(left.Truncate(time.Second))))}
}
