package ui

import (
	"strings"

	"github.com/peeklock/peeklock/broker"
)

// EntityRow is one line of the entity list.
type EntityRow struct {
	Entity broker.Entity
	// Depth is the recent history of the entity's depth, oldest first, for
	// the sparkline.
	Depth []int64
	// Current marks the entity whose panes are shown.
	Current bool
}

// sparkChars are the eight heights of a sparkline cell.
var sparkChars = []rune("▁▂▃▄▅▆▇█")

// Sparkline renders the last w values of vals as w cells of block heights,
// scaled to the largest of them; missing history is blank.
func Sparkline(vals []int64, w int) string {
	if w <= 0 {
		return ""
	}
	if len(vals) > w {
		vals = vals[len(vals)-w:]
	}
	var hi int64
	for _, v := range vals {
		hi = max(hi, v)
	}
	var b strings.Builder
	b.WriteString(blank(w - len(vals)))
	for _, v := range vals {
		i := 0
		if hi > 0 && v > 0 {
			i = int((v*int64(len(sparkChars)-1) + hi - 1) / hi)
		}
		b.WriteRune(sparkChars[min(i, len(sparkChars)-1)])
	}
	return b.String()
}

// displayName is the name of an entity in the list: subscriptions are shown
// under their topic as "└ name".
func displayName(e broker.Entity) string {
	if _, sub, ok := broker.SplitSubscriptionPath(e.Path); ok {
		return " └ " + Sanitize(sub)
	}
	return Sanitize(e.Path)
}

// StatusMarker is the mark the entity list puts after the name of an entity
// whose status refuses operations, short enough for the narrow list: "off"
// (Disabled), "!tx" (SendDisabled: no sends), "!rx" (ReceiveDisabled: no
// receives); "" for Active. The info view says it in words.
func StatusMarker(st broker.EntityStatus) string {
	switch st {
	case broker.StatusDisabled:
		return "off"
	case broker.StatusSendDisabled:
		return "!tx"
	case broker.StatusReceiveDisabled:
		return "!rx"
	}
	return ""
}

// nameCell fits an entity's name and status marker into w cells; the
// marker stays whole while the name keeps at least four cells.
func nameCell(e broker.Entity, w int) string {
	mark := StatusMarker(e.Settings.Status)
	if mark == "" || w-len(mark)-1 < 4 {
		return fit(displayName(e), w)
	}
	return fit(displayName(e), w-len(mark)-1) + " " + mark
}

// Depth returns the number the sparkline tracks: every message of the
// entity's main queue and of its dead-letter and transfer dead-letter
// sub-queues.
func Depth(n broker.Counts) int64 {
	return n.Active + n.Locked + n.Deferred + n.Scheduled + n.Count(broker.CategoryDeadLettered)
}

// Column widths of the narrow entity list: the total (Σ) and the
// dead-lettered count (X).
const (
	narrowTotalW = 5
	narrowDLQW   = 4
	// narrowSparkFrom is the narrowest list that still has a sparkline.
	narrowSparkFrom = 30
)

// EntityList renders the entity list in exactly h lines of w cells. Wide
// lists show every count (A active, L locked, D deferred, S scheduled, X
// dead-lettered, transfer-dead-lettered included); narrow ones the total
// (Σ) and the dead-lettered count (X), so that a dead-letter queue that
// fills is seen at any width. An entity whose status refuses operations
// has its StatusMarker after the name. top is the index of the first row
// shown. The help screen's legend (Legend) explains the columns.
func EntityList(c *Common, rows []EntityRow, top, w, h int, note string) []string {
	st := c.Styles
	lines := make([]string, 0, h)
	if w <= 0 || h <= 0 {
		return lines
	}
	wide := w >= 40
	spark, col := 6, 4
	if w >= 50 {
		spark, col = 8, 5
	}
	if !wide && w < narrowSparkFrom {
		spark = 0
	}
	nameW := w - 5*col - spark - 1
	if !wide {
		nameW = w - narrowTotalW - narrowDLQW - 1 - spark
	}
	header := fit("Entities", nameW) + fitLeft("Σ", narrowTotalW) + fitLeft("X", narrowDLQW) + " " + fit("depth", spark)
	if wide {
		header = fit("Entities", nameW) + fitLeft("A", col) + fitLeft("L", col) + fitLeft("D", col) +
			fitLeft("S", col) + fitLeft("X", col) + " " + fit("depth", spark)
	}
	lines = append(lines, st.Header.Render(fit(header, w)))
	if len(rows) == 0 {
		if note == "" {
			note = "no entities"
		}
		lines = append(lines, st.Faint.Render(fit(" "+Sanitize(note), w)))
		return padLines(lines, w, h)
	}
	for i := top; i < len(rows) && len(lines) < h; i++ {
		r := rows[i]
		n := r.Entity.Counts
		dlq := n.Count(broker.CategoryDeadLettered)
		s := st.EntityNormal
		if r.Current {
			s = st.EntitySelected
		}
		var line string
		if wide {
			line = s.Render(nameCell(r.Entity, nameW) + fitLeft(CountOf(n, broker.CategoryActive), col) +
				fitLeft(CountOf(n, broker.CategoryLocked), col) + fitLeft(CountOf(n, broker.CategoryDeferred), col) +
				fitLeft(CountOf(n, broker.CategoryScheduled), col) + fitLeft(CountOf(n, broker.CategoryDeadLettered), col) + " ")
		} else {
			x := s.Render(fitLeft(CountOf(n, broker.CategoryDeadLettered), narrowDLQW))
			if dlq > 0 && !r.Current {
				x = st.Error.Render(fitLeft(Count(dlq), narrowDLQW))
			}
			line = s.Render(nameCell(r.Entity, nameW)+fitLeft(DepthOf(n), narrowTotalW)) + x + s.Render(" ")
		}
		if spark > 0 {
			if r.Entity.Kind == broker.KindTopic {
				line += blank(spark) // a topic holds no messages itself
			} else {
				line += st.Sparkline.Render(Sparkline(r.Depth, spark))
			}
		}
		lines = append(lines, fit(line, w))
	}
	return padLines(lines, w, h)
}
