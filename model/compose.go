package model

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// Fields of the compose dialog, in order.
const (
	fTo = iota
	fContentType
	fMessageID
	fSessionID
	fSubject
	fCorrelationID
	fReplyTo
	fProperties
	fTTL
	fSchedule
)

// openCompose opens the compose dialog: empty for n, or a copy of orig for
// e (edit a copy and send it).
func openCompose(m *Model, orig *broker.Message) tea.Cmd {
	title := "Compose and send"
	if orig != nil {
		title = fmt.Sprintf("Edit a copy of sequence number %d and send it", orig.SequenceNumber)
	}
	d := newDialog(dlgCompose, title, m.width, "To", "ContentType", "MessageId", "SessionId", "Subject", "CorrelationId",
		"ReplyTo", "Properties", "TimeToLive", "Schedule")
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "│ "
	ta.SetHeight(max(2, min(6, m.height-22)))
	ta.CharLimit = 0
	tst := ta.Styles()
	tst.Cursor.Blink = false
	ta.SetStyles(tst)
	d.body = &ta
	d.setWidth(m.width)
	d.inputs[fTo].SetValue(broker.ResubmitTarget(m.entity))
	d.inputs[fContentType].SetValue(DefaultContentType) // a value, sent as it is unless changed
	d.inputs[fMessageID].Placeholder = "empty: a new UUID"
	d.inputs[fSessionID].Placeholder = "empty: none"
	if e, ok := m.currentEntity(); ok && e.Settings.RequiresSession {
		d.inputs[fSessionID].Placeholder = "required: " + ui.Sanitize(e.Path) + " uses sessions"
	}
	d.inputs[fProperties].Placeholder = "name=value; n:int=5; ok:bool=true; at:time=2025-01-02T15:04:05Z"
	d.inputs[fTTL].Placeholder = "e.g. 10m (empty: entity default)"
	d.inputs[fSchedule].Placeholder = "empty: now; +30s; or 2025-01-02T15:04:05Z"
	if orig != nil {
		c := orig.CopyForSend()
		d.orig = c
		d.fill(fContentType, c.ContentType)
		d.fill(fMessageID, c.MessageID)
		d.fill(fSessionID, c.SessionID)
		d.fill(fSubject, c.Subject)
		d.fill(fCorrelationID, c.CorrelationID)
		d.fill(fReplyTo, c.ReplyTo)
		d.fill(fProperties, formatProperties(c.ApplicationProperties))
		if c.TimeToLive > 0 && c.TimeToLive < broker.MaxTimeToLive {
			d.inputs[fTTL].SetValue(c.TimeToLive.String())
		}
		if c.BodyKind == broker.BodyData && utf8.Valid(c.Body) {
			d.body.SetValue(ui.SanitizeMultiline(string(c.Body)))
			d.bodyPrefill = d.body.Value()
		} else {
			d.body.Placeholder = fmt.Sprintf("(%s body of %d bytes kept unless you type a new one)", c.BodyKind, len(c.Body))
		}
	}
	for i := range d.inputs {
		d.inputs[i].CursorEnd()
	}
	d.selectFocused()
	d.footer = "tab/enter next field · ctrl+s send · esc cancel"
	d.submit = func(d *dialogState) (tea.Cmd, error) { return d.send(m) }
	m.dialog = d
	return d.inputs[0].Focus()
}

// DefaultContentType is the ContentType a new message of the compose
// dialog has unless it is changed.
const DefaultContentType = "application/json"

// Property types of the compose dialog's Properties field ("name:type=value").
const (
	propString = "string"
	propInt    = "int"    // int64 (AMQP long)
	propInt32  = "int32"  // int32 (AMQP int)
	propDouble = "double" // float64
	propBool   = "bool"
	propTime   = "time" // RFC 3339, an AMQP timestamp
)

// propTypes are the types a property can be given, as the error lists
// them.
var propTypes = []string{propString, propInt, propInt32, propDouble, propBool, propTime}

// typeSuffix returns the ":type" a value is written with in the Properties
// field, "" for a string and for types the field cannot write.
func typeSuffix(v any) (string, bool) {
	switch v.(type) {
	case string:
		return "", true
	case int64:
		return ":" + propInt, true
	case int32:
		return ":" + propInt32, true
	case float64:
		return ":" + propDouble, true
	case bool:
		return ":" + propBool, true
	case time.Time:
		return ":" + propTime, true
	}
	return "", false
}

// formatProperties renders application properties as "a=x; n:int=5": a
// value that is not a string carries its type, so that sending the text
// back gives the same values. Types the field cannot write are shown
// untyped (an unchanged one keeps its type: see parseProperties).
func formatProperties(p map[string]any) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sortStrings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := p[k]
		suffix, _ := typeSuffix(v)
		text := fmt.Sprint(v)
		if t, ok := v.(time.Time); ok {
			text = t.UTC().Format(time.RFC3339Nano)
		}
		parts = append(parts, k+suffix+"="+text)
	}
	return strings.Join(parts, "; ")
}

// parseProperties parses "a=x; n:int=5; f:double=1.5; ok:bool=true;
// at:time=2025-01-02T15:04:05Z": a name, an optional type (string when
// none; see propTypes) and a value. A property of orig written without a
// type and whose text is unchanged keeps its original type.
func parseProperties(s string, orig map[string]any) (map[string]any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	out := make(map[string]any)
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, &ActionError{Action: "compose", Reason: fmt.Sprintf("property %q is not name=value (or name:type=value)", part)}
		}
		v = strings.TrimSpace(v)
		name, typ, typed := strings.Cut(k, ":")
		name, typ = strings.TrimSpace(name), strings.ToLower(strings.TrimSpace(typ))
		if name == "" {
			return nil, &ActionError{Action: "compose", Reason: fmt.Sprintf("property %q has no name", part)}
		}
		if !typed {
			if ov, ok := orig[name]; ok && fmt.Sprint(ov) == v {
				out[name] = ov
				continue
			}
			out[name] = v
			continue
		}
		val, err := typedValue(typ, v)
		if err != nil {
			return nil, &ActionError{Action: "compose", Reason: fmt.Sprintf("property %q: %v", name, err)}
		}
		out[name] = val
	}
	return out, nil
}

// typedValue converts the text v of a property to type typ.
func typedValue(typ, v string) (any, error) {
	switch typ {
	case propString, "":
		return v, nil
	case propInt, "long", "int64":
		return strconv.ParseInt(v, 10, 64)
	case propInt32:
		n, err := strconv.ParseInt(v, 10, 32)
		return int32(n), err
	case propDouble, "float", "float64":
		return strconv.ParseFloat(v, 64)
	case propBool:
		return strconv.ParseBool(v)
	case propTime, "timestamp":
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, fmt.Errorf("%q is not an RFC 3339 time such as 2025-01-02T15:04:05Z", v)
		}
		return t.UTC(), nil
	}
	return nil, fmt.Errorf("unknown type %q (one of %s)", typ, strings.Join(propTypes, ", "))
}

// ParseSchedule parses a schedule as the compose dialog's Schedule field
// and the command line's send --schedule take it: empty (now), a duration
// from now ("+30s" or "30s"), or an RFC 3339 time. An error is an
// *ActionError.
func ParseSchedule(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(s, "+")); err == nil {
		if d <= 0 {
			return time.Time{}, &ActionError{Action: "compose", Reason: "the schedule must be in the future"}
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, &ActionError{Action: "compose", Reason: fmt.Sprintf("schedule %q is neither a duration (+30s) nor an RFC 3339 time", s)}
	}
	return t, nil
}

// composed makes the message of the compose dialog, with the entity it
// goes to and the time it is scheduled for (zero for now), relative to now.
func (d *dialogState) composed(now time.Time) (string, *broker.Message, time.Time, error) {
	to := strings.TrimSpace(d.value(fTo))
	if to == "" {
		return "", nil, time.Time{}, &ActionError{Action: "compose", Reason: "To is required"}
	}
	msg := &broker.Message{}
	var origProps map[string]any
	if d.orig != nil {
		msg = d.orig.Clone()
		origProps = d.orig.ApplicationProperties
	}
	msg.ContentType = strings.TrimSpace(d.field(fContentType))
	msg.MessageID = strings.TrimSpace(d.field(fMessageID))
	if msg.MessageID == "" {
		msg.MessageID = newMessageID()
	}
	msg.SessionID = strings.TrimSpace(d.field(fSessionID))
	msg.Subject = d.field(fSubject)
	msg.CorrelationID = strings.TrimSpace(d.field(fCorrelationID))
	msg.ReplyTo = strings.TrimSpace(d.field(fReplyTo))
	if p, ok := d.prefill[fProperties]; ok && d.value(fProperties) == p {
		msg.ApplicationProperties = origProps // unchanged: every value keeps its type
	} else {
		props, err := parseProperties(d.value(fProperties), origProps)
		if err != nil {
			return "", nil, time.Time{}, err
		}
		msg.ApplicationProperties = props
	}
	msg.TimeToLive = 0
	if ttl := strings.TrimSpace(d.value(fTTL)); ttl != "" {
		v, err := time.ParseDuration(ttl)
		if err != nil || v <= 0 {
			return "", nil, time.Time{}, &ActionError{Action: "compose", Reason: fmt.Sprintf("TimeToLive %q is not a positive duration such as 10m", ttl)}
		}
		msg.TimeToLive = v
	}
	at, err := ParseSchedule(d.value(fSchedule), now)
	if err != nil {
		return "", nil, time.Time{}, err
	}
	body := d.body.Value()
	switch {
	case d.orig != nil && d.bodyPrefill != "" && body == d.bodyPrefill:
		// unchanged: the original bytes, control characters and all, cut
		// into the original's data sections
	case d.orig == nil || body != "" || (d.orig.BodyKind == broker.BodyData && utf8.Valid(d.orig.Body)):
		msg.Body = []byte(body)
		msg.BodyKind = broker.BodyData
		msg.DataSections = nil // a typed body is one section
	}
	msg.ScheduledEnqueueTime = time.Time{}
	return to, msg, at, nil
}

// send sends (or schedules) the message composed in the dialog.
func (d *dialogState) send(m *Model) (tea.Cmd, error) {
	to, msg, at, err := d.composed(m.now)
	if err != nil {
		return nil, err
	}
	if !at.IsZero() && !m.caps.Supports(broker.CanSchedule) {
		return nil, &ActionError{Action: "schedule", Reason: m.caps.Reason(broker.CanSchedule)}
	}
	c, timeout := m.client, m.opts.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		if !at.IsZero() {
			seqs, err := c.Schedule(ctx, to, at, []*broker.Message{msg})
			return sentMsg{entity: to, messageID: msg.MessageID, scheduled: seqs, err: err}
		}
		return sentMsg{entity: to, messageID: msg.MessageID, err: c.Send(ctx, to, []*broker.Message{msg})}
	}, nil
}

// onSent takes the result of a send.
func (m *Model) onSent(msg sentMsg) tea.Cmd {
	if msg.err != nil {
		m.setErr(fmt.Errorf("send to %s: %w", msg.entity, msg.err))
		return nil
	}
	if len(msg.scheduled) > 0 {
		m.setInfo(fmt.Sprintf("scheduled in %s as sequence number %d (MessageId %s)", msg.entity, msg.scheduled[0], msg.messageID))
	} else {
		m.setInfo(fmt.Sprintf("sent to %s: MessageId %s", msg.entity, msg.messageID))
	}
	return m.requestRefresh()
}
