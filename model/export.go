package model

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

// MessageJSON is the JSON form of a message used by copy (y) and export
// (x): every broker property, the application properties, and the body as
// text when it is UTF-8 (Body) or else as base64 (BodyBase64), with the
// lengths of its data sections when the sender cut it into several.
type MessageJSON struct {
	SequenceNumber          int64          `json:"SequenceNumber"`
	MessageID               string         `json:"MessageId,omitempty"`
	ContentType             string         `json:"ContentType,omitempty"`
	CorrelationID           string         `json:"CorrelationId,omitempty"`
	Subject                 string         `json:"Subject,omitempty"`
	To                      string         `json:"To,omitempty"`
	ReplyTo                 string         `json:"ReplyTo,omitempty"`
	ReplyToSessionID        string         `json:"ReplyToSessionId,omitempty"`
	SessionID               string         `json:"SessionId,omitempty"`
	PartitionKey            string         `json:"PartitionKey,omitempty"`
	ViaPartitionKey         string         `json:"ViaPartitionKey,omitempty"`
	TimeToLive              string         `json:"TimeToLive,omitempty"`
	ScheduledEnqueueTimeUtc *time.Time     `json:"ScheduledEnqueueTimeUtc,omitempty"`
	EnqueuedSequenceNumber  int64          `json:"EnqueuedSequenceNumber,omitempty"`
	EnqueuedTimeUtc         *time.Time     `json:"EnqueuedTimeUtc,omitempty"`
	ExpiresAtUtc            *time.Time     `json:"ExpiresAtUtc,omitempty"`
	LockedUntilUtc          *time.Time     `json:"LockedUntilUtc,omitempty"`
	DeliveryCount           uint32         `json:"DeliveryCount"`
	DeadLetterSource        string         `json:"DeadLetterSource,omitempty"`
	State                   string         `json:"State"`
	Size                    int64          `json:"Size"`
	ApplicationProperties   map[string]any `json:"ApplicationProperties,omitempty"`
	BodyKind                string         `json:"BodyKind"`
	Body                    *string        `json:"Body,omitempty"`
	BodyBase64              []byte         `json:"BodyBase64,omitempty"`
	// DataSections are the lengths of the data sections the body was sent
	// as, when more than one (broker.Message.DataSections).
	DataSections []int `json:"DataSections,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// ToJSON returns the JSON form of m.
func ToJSON(m *broker.Message) MessageJSON {
	j := MessageJSON{
		SequenceNumber: m.SequenceNumber, MessageID: m.MessageID, ContentType: m.ContentType,
		CorrelationID: m.CorrelationID, Subject: m.Subject, To: m.To, ReplyTo: m.ReplyTo,
		ReplyToSessionID: m.ReplyToSessionID, SessionID: m.SessionID, PartitionKey: m.PartitionKey,
		ViaPartitionKey: m.ViaPartitionKey, ScheduledEnqueueTimeUtc: timePtr(m.ScheduledEnqueueTime),
		EnqueuedSequenceNumber: m.EnqueuedSequenceNumber, EnqueuedTimeUtc: timePtr(m.EnqueuedTime),
		ExpiresAtUtc: timePtr(m.ExpiresAt), LockedUntilUtc: timePtr(m.LockedUntil),
		DeliveryCount: m.DeliveryCount, DeadLetterSource: m.DeadLetterSource, State: m.State.String(),
		Size: m.Size, ApplicationProperties: m.ApplicationProperties, BodyKind: m.BodyKind.String(),
		DataSections: m.DataSections,
	}
	if m.TimeToLive > 0 && m.TimeToLive < broker.MaxTimeToLive {
		j.TimeToLive = m.TimeToLive.String()
	}
	if m.BodyKind == broker.BodyData && utf8.Valid(m.Body) {
		s := string(m.Body)
		j.Body = &s
	} else if len(m.Body) > 0 {
		j.BodyBase64 = m.Body
	}
	return j
}

// chosenMessages returns the messages that y and x act on: the selected
// rows of the focused pane that are loaded, or the target message.
func (m *Model) chosenMessages() []*broker.Message {
	if m.detail == nil {
		p := m.focused()
		if len(p.selected) > 0 {
			var out []*broker.Message
			for _, x := range p.rows {
				if p.selected[x.SequenceNumber] {
					out = append(out, x)
				}
			}
			return out
		}
	}
	if cur, _ := m.target(); cur != nil {
		return []*broker.Message{cur}
	}
	return nil
}

// copyJSON copies the chosen messages as JSON to the clipboard (OSC 52):
// one object, or an array for a selection.
func (m *Model) copyJSON() tea.Cmd {
	msgs := m.chosenMessages()
	if len(msgs) == 0 {
		return m.refuse(&m.keys.Copy, "no message here")
	}
	var v any
	if len(msgs) == 1 {
		v = ToJSON(msgs[0])
	} else {
		all := make([]MessageJSON, len(msgs))
		for i, x := range msgs {
			all[i] = ToJSON(x)
		}
		v = all
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		m.setErr(err)
		return nil
	}
	m.setInfo(fmt.Sprintf("copied %d message(s) as JSON (%d bytes)", len(msgs), len(b)))
	return tea.SetClipboard(string(b))
}

// exportName returns the file name of an export of entity at t.
func exportName(entity string, t time.Time) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, entity)
	return fmt.Sprintf("peeklock-%s-%s.jsonl", safe, t.UTC().Format("20060102-150405.000"))
}

// export writes the chosen messages as JSON lines into ExportDir.
func (m *Model) export() tea.Cmd {
	msgs := m.chosenMessages()
	if len(msgs) == 0 {
		return m.refuse(&m.keys.Export, "no message here")
	}
	path := filepath.Join(m.opts.ExportDir, exportName(m.entity, m.now))
	return func() tea.Msg {
		n, err := writeJSONLines(path, msgs)
		return exportedMsg{path: path, n: n, err: err}
	}
}

// writeJSONLines writes one JSON object per line; the file must not exist.
func writeJSONLines(path string, msgs []*broker.Message) (int, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	n := 0
	for _, x := range msgs {
		if err := enc.Encode(ToJSON(x)); err != nil {
			f.Close()
			return n, fmt.Errorf("export: %w", err)
		}
		n++
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return n, fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

// newMessageID returns a new MessageId for a composed message.
func newMessageID() string { return uuid.NewString() }

func sortStrings(s []string) { sort.Strings(s) }
