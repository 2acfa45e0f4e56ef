package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgjson"
)

// MessageJSON is the JSON form of a message used by copy (y) and export
// (x): package msgjson's, which the command line shares.
type MessageJSON = msgjson.Message

// ToJSON returns the JSON form of m.
func ToJSON(m *broker.Message) MessageJSON { return msgjson.FromMessage(m) }

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
	w := msgjson.NewWriter(f)
	for _, x := range msgs {
		if err := w.Write(x); err != nil {
			f.Close()
			return w.Count(), fmt.Errorf("export: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return w.Count(), fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		return w.Count(), fmt.Errorf("export: %w", err)
	}
	return w.Count(), nil
}

// newMessageID returns a new MessageId for a composed message.
func newMessageID() string { return uuid.NewString() }

func sortStrings(s []string) { sort.Strings(s) }
