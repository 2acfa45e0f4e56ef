package ui

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/peeklock/peeklock/broker"
)

// TransferTag marks the reason of a message of the transfer dead-letter
// sub-queue (one that could not be auto-forwarded) in the Dead-lettered
// pane, which shows both dead-letter sub-queues.
const TransferTag = "[transfer] "

// Row is one message row of a pane with its decorations.
type Row struct {
	Msg *broker.Message
	// Selected is set for rows selected with space.
	Selected bool
	// Held is set when this dashboard holds the message's lock (it can
	// settle it); AutoRenew when it renews that lock by itself.
	Held, AutoRenew bool
	// Flash is FlashExpired or FlashLost for a lock that has just ended; the
	// row stays on screen, flashing, for a moment.
	Flash string
	// Match is set for rows that a filter or a jump points at.
	Match bool
}

// PaneState is what a pane draws.
type PaneState struct {
	Category broker.Category
	// Counts are the selected entity's counts; the title shows the
	// category's.
	Counts broker.Counts
	// Rows are the rows on screen, no more.
	Rows []Row
	// Cursor is the index in Rows of the row under the cursor (-1: none).
	Cursor int
	// Focused marks the pane that keys act on.
	Focused bool
	// Position is the 1-based position of Rows[0] in the category, when
	// known (0: unknown).
	Position int64
	// MoreBelow says there are messages after the last row.
	MoreBelow bool
	// Note is shown in the title: the filter, "loading…", a scan summary.
	Note string
	// Empty replaces the rows when there are none: "no messages", or why the
	// pane cannot be shown ("browsing is not supported: …").
	Empty string
	// LockDuration is the entity's lock duration, the full length of a
	// countdown bar.
	LockDuration time.Duration
	// Sessions is set for a session-aware entity: the rows show their
	// SessionId.
	Sessions bool
}

// column kinds of a pane.
type colKind uint8

const (
	colSeq colKind = iota
	colID
	colSubject
	colLock
	colAge
	colDue
	colDC
	colSize
	colReason
	colDesc
	colSession
)

type column struct {
	kind  colKind
	title string
	w     int
	flex  int // share of the remaining width; 0: fixed
	right bool
}

// columns returns the columns of a pane of category c in w cells (after the
// two marker cells), dropping the least important when narrow. reasonW is
// the width of the widest dead-letter reason on screen (see dlqColumns).
func columns(c broker.Category, hasLock bool, w, reasonW int) []column {
	return columnsOf(c, hasLock, false, w, reasonW)
}

// columnsOf is columns with, for a session-aware entity (sessions), a
// SessionId column after the sequence number (not in the Dead-lettered
// pane: the dead-letter sub-queues are not session-aware).
func columnsOf(c broker.Category, hasLock, sessions bool, w, reasonW int) []column {
	if c == broker.CategoryDeadLettered {
		return dlqColumns(hasLock, w, reasonW)
	}
	var cols []column
	seq := column{kind: colSeq, title: "Seq", w: 8, right: true}
	if w < 70 {
		seq.w = 7
	}
	id := column{kind: colID, title: "MessageId", flex: 4}
	subj := column{kind: colSubject, title: "Subject", flex: 5}
	age := column{kind: colAge, title: "Age", w: 5, right: true}
	dc := column{kind: colDC, title: "DC", w: 3, right: true}
	size := column{kind: colSize, title: "Size", w: 5, right: true}
	lock := column{kind: colLock, title: "Lock", w: 16}
	switch c {
	case broker.CategoryLocked:
		cols = []column{seq, id, subj, lock, age, dc, size}
	case broker.CategoryScheduled:
		cols = []column{seq, id, subj, {kind: colDue, title: "Due", w: 9, right: true}, dc, size}
	default:
		cols = []column{seq, id, subj}
		if hasLock {
			cols = append(cols, lock)
		}
		cols = append(cols, age, dc, size)
	}
	if sessions {
		cols = append(cols[:1], append([]column{{kind: colSession, title: "SessionId", flex: 3}}, cols[1:]...)...)
	}
	// Drop fixed columns from the right end until the flexible ones get at
	// least minFlex cells each.
	const minFlex = 10
	drop := []colKind{colSize, colAge, colDC}
	for _, k := range drop {
		if flexRoom(cols, w) >= minFlex*countFlex(cols) {
			break
		}
		cols = without(cols, k)
	}
	if c == broker.CategoryLocked || hasLock {
		if flexRoom(cols, w) < minFlex*countFlex(cols) {
			for i := range cols {
				if cols[i].kind == colLock {
					cols[i].w = 9
				}
			}
		}
	}
	return share(cols, w)
}

// Widths of the Reason column of the Dead-lettered pane.
const (
	minReasonW = 6
	maxReasonW = 32
)

// dlqColumns returns the columns of the Dead-lettered pane in w cells: the
// reason first and as wide as the widest on screen (reasonW, within
// minReasonW and maxReasonW), so that it is read whole, then the
// description and the MessageId. When narrow, the size, the age and the
// MessageId give way, then the description; the reason and the delivery
// count stay.
func dlqColumns(hasLock bool, w, reasonW int) []column {
	seq := column{kind: colSeq, title: "Seq", w: 8, right: true}
	if w < 70 {
		seq.w = 7
	}
	reason := column{kind: colReason, title: "Reason", w: min(max(reasonW, minReasonW), maxReasonW)}
	cols := []column{seq, reason, {kind: colDesc, title: "Description", flex: 4}, {kind: colID, title: "MessageId", flex: 3}}
	if hasLock {
		cols = append(cols, column{kind: colLock, title: "Lock", w: 9})
	}
	cols = append(cols, column{kind: colAge, title: "Age", w: 5, right: true},
		column{kind: colDC, title: "DC", w: 3, right: true}, column{kind: colSize, title: "Size", w: 5, right: true})
	const minFlex = 10
	for _, k := range []colKind{colSize, colAge, colID, colLock, colDesc} {
		if countFlex(cols) > 0 && flexRoom(cols, w) >= minFlex*countFlex(cols) {
			break
		}
		cols = without(cols, k)
	}
	if countFlex(cols) == 0 {
		// Only the reason is left to give room to: it takes the rest.
		for i := range cols {
			if cols[i].kind == colReason {
				cols[i].w, cols[i].flex = 0, 1
			}
		}
	}
	return share(cols, w)
}

// ReasonWidth returns the cells the Reason column needs for rows: the
// widest reason among them, with the transfer tag where it applies.
func ReasonWidth(rows []Row) int {
	n := 0
	for _, r := range rows {
		if r.Msg != nil {
			n = max(n, ansi.StringWidth(cellText(time.Time{}, r.Msg, colReason)))
		}
	}
	return n
}

// share gives the flexible columns of cols the room left in w cells, in
// proportion to their flex; rounding leftovers go to the last of them.
func share(cols []column, w int) []column {
	room := flexRoom(cols, w)
	total := 0
	for _, col := range cols {
		total += col.flex
	}
	last := -1
	for i := range cols {
		if cols[i].flex > 0 {
			cols[i].w = max(1, room*cols[i].flex/max(total, 1))
			last = i
		}
	}
	if last >= 0 { // rounding leftovers go to the last flexible column
		used := 0
		for _, col := range cols {
			used += col.w
		}
		used += len(cols) - 1
		cols[last].w += max(0, w-used)
	}
	return cols
}

func countFlex(cols []column) int {
	n := 0
	for _, c := range cols {
		if c.flex > 0 {
			n++
		}
	}
	return n
}

func flexRoom(cols []column, w int) int {
	fixed := len(cols) - 1 // one space between columns
	for _, c := range cols {
		if c.flex == 0 {
			fixed += c.w
		}
	}
	return w - fixed
}

func without(cols []column, k colKind) []column {
	out := cols[:0:0]
	for _, c := range cols {
		if c.kind != k {
			out = append(out, c)
		}
	}
	return out
}

// Pane renders a pane into exactly h lines of w cells: a title, a column
// header and the rows.
func Pane(c *Common, p PaneState, w, h int) []string {
	st := c.Styles
	lines := make([]string, 0, h)
	if h <= 0 || w <= 0 {
		return lines
	}
	// Title.
	title := p.Category.String() + " " + CountOf(p.Counts, p.Category)
	ts := st.TabInactive
	if p.Focused {
		ts = st.TabActive
	}
	head := ts.Render(title)
	info := ""
	if p.Position > 0 && len(p.Rows) > 0 {
		info = "rows " + strconv.FormatInt(p.Position, 10) + "–" + strconv.FormatInt(p.Position+int64(len(p.Rows))-1, 10)
		if p.MoreBelow {
			info += " ↓"
		}
	}
	if p.Note != "" {
		if info != "" {
			info += "  "
		}
		info += p.Note
	}
	if h == 1 && len(p.Rows) == 0 && p.Empty != "" {
		// A pane of one line says why it is empty in its title.
		if info != "" {
			info += "  "
		}
		info += p.Empty
	}
	if info != "" {
		head += " " + st.Faint.Render(Sanitize(info))
	}
	lines = append(lines, fit(head, w))
	if h == 1 {
		return lines
	}
	hasLock := false
	for _, r := range p.Rows {
		if r.Msg != nil && (r.Msg.Locked() || !r.Msg.LockedUntil.IsZero() || r.Flash != "") {
			hasLock = true
			break
		}
	}
	cols := columnsOf(p.Category, hasLock, p.Sessions, w-2, ReasonWidth(p.Rows))
	// Header.
	var hb strings.Builder
	hb.WriteString("  ")
	for i, col := range cols {
		if i > 0 {
			hb.WriteByte(' ')
		}
		if col.right {
			hb.WriteString(fitLeft(col.title, col.w))
		} else {
			hb.WriteString(fit(col.title, col.w))
		}
	}
	lines = append(lines, st.Header.Render(fit(hb.String(), w)))
	if len(p.Rows) == 0 {
		msg := p.Empty
		if msg == "" {
			msg = "no messages"
		}
		if len(lines) < h {
			lines = append(lines, st.Faint.Render(fit("  "+msg, w)))
		}
		return padLines(lines, w, h)
	}
	for i, r := range p.Rows {
		if len(lines) >= h {
			break
		}
		lines = append(lines, paneRow(c, p, r, cols, i == p.Cursor && p.Focused, w))
	}
	// Every line is w cells already: pad with blank lines only.
	for len(lines) < h {
		lines = append(lines, blank(w))
	}
	return lines
}

// paneRow renders one message row.
func paneRow(c *Common, p PaneState, r Row, cols []column, cursor bool, w int) string {
	st := c.Styles
	m := r.Msg
	base := st.Text
	switch {
	case cursor:
		base = st.Cursor
	case r.Flash != "" && FlashOn(c.Now):
		base = st.Flash
	case r.Selected:
		base = st.Selected
	case r.Match:
		base = st.Highlight
	}
	var b strings.Builder
	mark := " "
	if cursor {
		mark = "▸"
	}
	sel := " "
	switch {
	case r.Selected:
		sel = "●"
	case r.Held && r.AutoRenew:
		sel = "↻"
	case r.Held:
		sel = "◆"
	}
	// Cells in the row's base style are rendered as one run: one styled
	// span per run instead of one per cell keeps a frame cheap.
	var run strings.Builder
	flush := func() {
		if run.Len() > 0 {
			b.WriteString(base.Render(run.String()))
			run.Reset()
		}
	}
	run.WriteString(mark + sel)
	for i, col := range cols {
		if i > 0 {
			run.WriteByte(' ')
		}
		if col.kind == colLock {
			flush()
			b.WriteString(lockCell(c, p, r, col.w, cursor))
			continue
		}
		text := cellText(c.Now, m, col.kind)
		if col.right {
			run.WriteString(fitLeft(text, col.w))
		} else {
			run.WriteString(fit(text, col.w))
		}
	}
	flush()
	// Every cell was cut or padded to its column's width: the row is as
	// wide as the columns, and measuring it again (the costly part of a
	// frame) is needed only when they do not fill w.
	used := 2 + len(cols) - 1
	for _, col := range cols {
		used += col.w
	}
	if used == w {
		return b.String()
	}
	return fit(b.String(), w)
}

func lockCell(c *Common, p PaneState, r Row, w int, cursor bool) string {
	m := r.Msg
	if m.LockedUntil.IsZero() && r.Flash == "" {
		s := c.Styles.Faint
		if cursor {
			s = c.Styles.Cursor
		}
		return s.Render(blank(w))
	}
	return Countdown(c.Styles, c.Now, m.LockedUntil, p.LockDuration, r.Flash, w)
}

// cellText returns the sanitised text of one cell.
func cellText(now time.Time, m *broker.Message, k colKind) string {
	switch k {
	case colSeq:
		return strconv.FormatInt(m.SequenceNumber, 10)
	case colID:
		return Sanitize(m.MessageID)
	case colSubject:
		return Sanitize(m.Subject)
	case colAge:
		return Age(now, m.EnqueuedTime)
	case colDue:
		if m.ScheduledEnqueueTime.IsZero() {
			return "-"
		}
		d := m.ScheduledEnqueueTime.Sub(now)
		if d <= 0 {
			return "due"
		}
		if d < time.Hour {
			// Whole seconds: a due time needs no tenths ("in 5s", "in 1m05s").
			return "in " + strings.Replace(Remaining(d.Truncate(time.Second)), ".0s", "s", 1)
		}
		return "in " + Short(d)
	case colDC:
		return strconv.FormatUint(uint64(m.DeliveryCount), 10)
	case colSize:
		return Bytes(m.Size)
	case colReason:
		if m.SubQueue == broker.SubQueueTransferDeadLetter {
			return TransferTag + Sanitize(m.DeadLetterReason())
		}
		return Sanitize(m.DeadLetterReason())
	case colDesc:
		return Sanitize(m.DeadLetterErrorDescription())
	case colSession:
		if !m.HasSessionID() {
			return "-"
		}
		return Sanitize(m.SessionID)
	}
	return ""
}

// tabNames are the pane names of the tab line, from the longest to the
// shortest; the last level keeps only the numbers, and the dead-letter
// queue's name, so that its count is always named.
var tabNames = [...][5]string{
	{"Active", "Locked", "Deferred", "Scheduled", "Dead-lettered"},
	{"Active", "Locked", "Deferred", "Scheduled", "DLQ"},
	{"Act", "Lock", "Def", "Sch", "DLQ"},
	{"", "", "", "", "DLQ"},
}

// tabLabels returns the labels of the tabs in a tab line of w cells: the
// longest names that fit, down to numbers and counts alone, so that every
// count, the dead-letter queue's first, stays on the line.
func tabLabels(counts broker.Counts, w int) [5]string {
	for lvl := range tabNames {
		if lvl == 0 && w < 100 {
			continue // "DLQ" says it in fewer cells
		}
		if tabsWidth(counts, lvl) <= w {
			return tabLabelsAt(counts, lvl)
		}
	}
	return tabLabelsAt(counts, len(tabNames)-1)
}

// Tabs renders the pane tabs with their counts in w cells; the focused pane
// is highlighted. A narrow line keeps the dead-letter tab: the others give
// way before it.
func Tabs(c *Common, counts broker.Counts, focus int, w int) string {
	st := c.Styles
	labels := tabLabels(counts, w)
	var b strings.Builder
	used := 0
	for i := range broker.Categories {
		s := st.TabInactive
		if i == focus {
			s = st.TabActive
		}
		if i == len(labels)-1 && used+ansi.StringWidth(labels[i])+2 > w {
			// Not room for every tab: the dead-letter tab goes at the
			// right edge, over what it covers.
			dlq := s.Render(labels[i])
			return fit(ansi.Truncate(b.String(), max(0, w-ansi.StringWidth(dlq)), "…"), max(0, w-ansi.StringWidth(dlq))) + dlq
		}
		b.WriteString(s.Render(labels[i]))
		used += ansi.StringWidth(labels[i]) + 2
	}
	return fit(b.String(), w)
}

// TabsWithNote is Tabs with one of notes (already styled) at the right end
// of the line: the longest tab names that leave room for a note, the first
// note that fits with them; without room for any, it is Tabs.
func TabsWithNote(c *Common, counts broker.Counts, focus int, w int, notes ...string) string {
	for lvl := range tabNames {
		for _, note := range notes {
			room := w - ansi.StringWidth(note) - 1
			if tabsWidth(counts, lvl) <= room && tabLabels(counts, room) == tabLabelsAt(counts, lvl) {
				return fit(Tabs(c, counts, focus, room), w-ansi.StringWidth(note)) + note
			}
		}
	}
	return Tabs(c, counts, focus, w)
}

// tabLabelsAt returns the tab labels of level lvl of tabNames.
func tabLabelsAt(counts broker.Counts, lvl int) [5]string {
	var out [5]string
	for i, cat := range broker.Categories {
		out[i] = strconv.Itoa(i+1) + " " + CountOf(counts, cat)
		if n := tabNames[lvl][i]; n != "" {
			out[i] = strconv.Itoa(i+1) + " " + n + " " + CountOf(counts, cat)
		}
	}
	return out
}

// tabsWidth is the width of the tab line at level lvl of tabNames.
func tabsWidth(counts broker.Counts, lvl int) int {
	n := 0
	for _, l := range tabLabelsAt(counts, lvl) {
		n += ansi.StringWidth(l) + 2 // the tab styles pad by one on each side
	}
	return n
}

// TabAt returns the index of the tab at column x of a tab line drawn by
// Tabs in w cells, or -1.
func TabAt(counts broker.Counts, w, x int) int {
	labels := tabLabels(counts, w)
	start := 0
	for i := range broker.Categories {
		tw := ansi.StringWidth(labels[i]) + 2 // the tab styles pad by one on each side
		if x >= start && x < start+tw {
			return i
		}
		start += tw
	}
	return -1
}
