package ui

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

// DetailInfo is what the detail view shows besides the message itself.
type DetailInfo struct {
	// Entity is the address the message was browsed from.
	Entity string
	// Held and AutoRenew say whether this dashboard holds the lock.
	Held, AutoRenew bool
	// LockDuration is the entity's lock duration (the countdown's length).
	LockDuration time.Duration
	// Hints are shown under the title (the request/reply links).
	Hints []string
	// DeadLettered is set for a message of the Dead-lettered pane: the view
	// opens with why it is there (see DeadLetterLines).
	DeadLettered bool
	// History is shown under the properties (see HistoryLines); nil shows
	// no History section.
	History *HistoryInfo
}

// detailKeyW is the width of the property names of the detail view: the
// longest broker property name, ScheduledEnqueueTimeUtc, and a space.
const detailKeyW = 24

// minValueW is the narrowest value column beside a property name; a
// narrower view puts the value under its name.
const minValueW = 16

// PropLines renders one property of the detail view in w cells: its name
// in a column of keyW cells and its value, already sanitised and styled by
// style, wrapped beside it, so that a long value is never cut. A name longer
// than the column, or a view too narrow for a value column, puts the value
// under the name, indented by two. suffix (already styled) follows the
// value's last line, after a space.
func PropLines(c *Common, name, value, suffix string, keyW, w int, style func(...string) string) []string {
	st := c.Styles
	vw := w - keyW - 1
	if ansi.StringWidth(name) < keyW && vw >= minValueW {
		parts := Wrap(value, vw)
		out := make([]string, len(parts))
		for i, p := range parts {
			head := blank(keyW)
			if i == 0 {
				head = st.Label.Render(fit(name, keyW))
			}
			out[i] = head + " " + style(p)
		}
		return withSuffix(out, suffix, keyW+1, w)
	}
	out := []string{st.Label.Render(name)}
	for _, p := range Wrap(value, max(1, w-2)) {
		out = append(out, "  "+style(p))
	}
	return withSuffix(out, suffix, 2, w)
}

// withSuffix appends suffix to the last of lines, or puts it on a line of
// its own, indented by indent, when it does not fit in w cells.
func withSuffix(lines []string, suffix string, indent, w int) []string {
	if suffix == "" {
		return lines
	}
	last := len(lines) - 1
	if ansi.StringWidth(lines[last])+1+ansi.StringWidth(suffix) <= w {
		lines[last] += " " + suffix
		return lines
	}
	return append(lines, blank(indent)+suffix)
}

// DeadLetterLines renders why a dead-lettered message is where it is, the
// first thing its detail view shows: the reason, the description, the
// entity it was dead-lettered from, its delivery count and when it was
// enqueued, each wrapped to w cells.
func DeadLetterLines(c *Common, m *broker.Message, entity string, w int) []string {
	st := c.Styles
	lines := sectionTitle(c, "Why it is dead-lettered", w)
	const keyW = 12
	add := func(name, value string, style func(...string) string) {
		lines = append(lines, PropLines(c, name, Sanitize(value), "", keyW, w, style)...)
	}
	reason := m.DeadLetterReason()
	if reason == "" {
		reason = "(no reason given)"
	}
	path, sub := broker.SplitAddress(entity)
	source := path + " (dead-lettered in this entity)"
	if sub == broker.SubQueueTransferDeadLetter || m.SubQueue == broker.SubQueueTransferDeadLetter {
		reason = TransferTag + reason
		source = path + " (could not be forwarded from this entity)"
	}
	if m.DeadLetterSource != "" {
		source = m.DeadLetterSource + " (dead-lettered there, forwarded here)"
	}
	enq := fmtTime(m.EnqueuedTime)
	if !m.EnqueuedTime.IsZero() {
		enq += " (" + Age(c.Now, m.EnqueuedTime) + " ago)"
	}
	add("Reason", reason, st.Error.Render)
	add("Description", orDash(m.DeadLetterErrorDescription()), st.Text.Render)
	add("Source", source, st.Text.Render)
	add("Deliveries", strconv.FormatUint(uint64(m.DeliveryCount), 10)+" (DeliveryCount)", st.Text.Render)
	add("Enqueued", enq, st.Text.Render)
	return lines
}

// fmtTime formats a broker time in UTC with milliseconds; zero is "-".
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// DetailBody renders the body section of the detail view; a body of several
// data sections says how many and shows each (see RenderBody). It is the
// costly part, so the model renders it once when the view opens (and on
// resize) and passes it to DetailLines on every frame.
func DetailBody(c *Common, m *broker.Message, w int) []string {
	st := c.Styles
	f, body := RenderBody(st, m, w)
	title := fmt.Sprintf("Body (%s, %s, %d bytes)", m.BodyKind, f, len(m.Body))
	if n := len(m.Sections()); m.BodyKind == broker.BodyData && n > 1 {
		title = fmt.Sprintf("Body (%d data sections, %d bytes)", n, len(m.Body))
	}
	return append(sectionTitle(c, title, w), body...)
}

// DetailLines renders the detail view of m, w cells wide: the broker
// properties of broker.Message (with a live lock countdown), the
// application properties and then body, the lines made by DetailBody.
func DetailLines(c *Common, m *broker.Message, info DetailInfo, body []string, w int) []string {
	st := c.Styles
	var lines []string
	section := func(title string) { lines = append(lines, sectionTitle(c, title, w)...) }
	const keyW = detailKeyW
	prop := func(name, value string) {
		lines = append(lines, PropLines(c, name, Sanitize(value), "", keyW, w, st.Text.Render)...)
	}
	head := fmt.Sprintf("Message %d in %s", m.SequenceNumber, Sanitize(info.Entity))
	for _, l := range Wrap(head, w) {
		lines = append(lines, st.Title.Render(l))
	}
	if info.DeadLettered {
		lines = append(lines, DeadLetterLines(c, m, info.Entity, w)...)
		lines = append(lines, "")
	}
	for _, h := range info.Hints {
		for _, l := range Wrap(Sanitize(h), w) {
			lines = append(lines, st.Faint.Render(l))
		}
	}

	section("Broker properties")
	ttl := "entity default"
	switch {
	case m.TimeToLive >= broker.MaxTimeToLive:
		ttl = "never expires"
	case m.TimeToLive > 0:
		ttl = m.TimeToLive.String()
	}
	expires := fmtTime(m.ExpiresAt)
	if m.ExpiresAt.IsZero() {
		expires = "never"
	}
	lockToken := "-"
	if m.Locked() {
		lockToken = m.LockToken.String()
	}
	locked := fmtTime(m.LockedUntil)
	if !m.LockedUntil.IsZero() {
		left := m.LockedUntil.Sub(c.Now)
		if left > 0 {
			locked += " (" + Remaining(left) + " left)"
		} else {
			locked += " (expired)"
		}
		if info.Held {
			locked += ", held by this dashboard"
			if info.AutoRenew {
				locked += ", auto-renewing"
			}
		}
	}
	enqSeq := "-"
	if m.EnqueuedSequenceNumber != 0 {
		enqSeq = strconv.FormatInt(m.EnqueuedSequenceNumber, 10)
	}
	prop("ContentType", orDash(m.ContentType))
	prop("CorrelationId", orDash(m.CorrelationID))
	prop("DeadLetterSource", orDash(m.DeadLetterSource))
	prop("DeliveryCount", strconv.FormatUint(uint64(m.DeliveryCount), 10))
	prop("EnqueuedSequenceNumber", enqSeq)
	prop("EnqueuedTimeUtc", fmtTime(m.EnqueuedTime))
	prop("ExpiresAtUtc", expires)
	prop("ForcePersistence", "not carried by this endpoint (the durable store always persists)")
	prop("Label / Subject", orDash(m.Subject))
	prop("LockedUntilUtc", locked)
	prop("LockToken", lockToken)
	prop("MessageId", orDash(m.MessageID))
	prop("PartitionKey", orDash(m.PartitionKey))
	prop("ReplyTo", orDash(m.ReplyTo))
	prop("ReplyToSessionId", orDash(m.ReplyToSessionID))
	prop("ScheduledEnqueueTimeUtc", fmtTime(m.ScheduledEnqueueTime))
	prop("SequenceNumber", strconv.FormatInt(m.SequenceNumber, 10))
	prop("SessionId", orDash(m.SessionID))
	prop("Size", strconv.FormatInt(m.Size, 10)+" bytes")
	prop("State", m.State.String())
	prop("TimeToLive", ttl)
	prop("To", orDash(m.To))
	prop("ViaPartitionKey", orDash(m.ViaPartitionKey))
	if !m.LockedUntil.IsZero() {
		lines = append(lines, blank(keyW+1)+Countdown(st, c.Now, m.LockedUntil, info.LockDuration, "", min(30, max(10, w-keyW-1))))
	}

	section(fmt.Sprintf("Application properties (%d)", len(m.ApplicationProperties)))
	if len(m.ApplicationProperties) == 0 {
		lines = append(lines, st.Faint.Render("none"))
	}
	keys := make([]string, 0, len(m.ApplicationProperties))
	for k := range m.ApplicationProperties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m.ApplicationProperties[k]
		lines = append(lines, PropLines(c, Sanitize(k), Sanitize(PropertyValue(v)), st.Faint.Render("("+PropertyType(v)+")"),
			keyW, w, st.Text.Render)...)
	}
	if info.History != nil {
		lines = append(lines, HistoryLines(c, *info.History, w)...)
	}

	return append(lines, body...)
}

// PropertyValue formats an application property value.
func PropertyValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case []byte:
		if len(v) > 64 {
			return hex.EncodeToString(v[:64]) + "…"
		}
		return hex.EncodeToString(v)
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case [16]byte:
		return uuid.UUID(v).String()
	}
	return fmt.Sprint(v)
}

// PropertyType names the type of an application property value.
func PropertyType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case []byte:
		return "binary"
	case time.Time:
		return "timestamp"
	case time.Duration:
		return "duration"
	case float32, float64:
		return "float"
	}
	return fmt.Sprintf("%T", v)
}

// Detail draws lines[top:] of the detail view in exactly h lines of w
// cells, with a title line saying where in the document the view is.
func Detail(c *Common, title string, lines []string, top, w, h int) []string {
	st := c.Styles
	out := make([]string, 0, h)
	if h <= 0 {
		return out
	}
	pos := ""
	if len(lines) > 0 {
		pos = fmt.Sprintf("  %d–%d of %d", top+1, min(top+h-1, len(lines)), len(lines))
	}
	out = append(out, fit(st.TabActive.Render(Sanitize(title))+st.Faint.Render(pos), w))
	for i := top; i < len(lines) && len(out) < h; i++ {
		out = append(out, fit(lines[i], w))
	}
	return padLines(out, w, h)
}

// SessionState renders the detail view's section with the state of session
// id, w cells wide: sanitised, as text or hex like bodies.
func SessionState(c *Common, id string, state []byte, w int) []string {
	st := c.Styles
	lines := sectionTitle(c, fmt.Sprintf("Session state of %q (%d bytes)", Sanitize(id), len(state)), w)
	if len(state) == 0 {
		return append(lines, st.Faint.Render("none"))
	}
	_, body := RenderBody(st, &broker.Message{Body: state, BodyKind: broker.BodyData}, w)
	return append(lines, body...)
}
