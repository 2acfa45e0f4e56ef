package model

import (
	"bytes"
	"encoding/json"
	"errors"
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

// export writes the chosen messages as JSON lines into ExportDir, or, over
// SSH, exports them as RemoteExport says.
func (m *Model) export() tea.Cmd {
	msgs := m.chosenMessages()
	if len(msgs) == 0 {
		return m.refuse(&m.keys.Export, "no message here")
	}
	name := exportName(m.entity, m.now)
	if re := m.opts.RemoteExport; re != nil {
		return exportRemote(*re, m.entity, name, msgs)
	}
	path := filepath.Join(m.opts.ExportDir, name)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // the notice says where the file went
	}
	return func() tea.Msg {
		n, err := writeJSONLines(path, msgs)
		return exportedMsg{path: path, n: n, err: err}
	}
}

// onExported reports an export; one for the clipboard is sent there now.
func (m *Model) onExported(msg exportedMsg) tea.Cmd {
	switch {
	case msg.err != nil:
		m.setErr(msg.err)
	case msg.path == "":
		m.setInfo(fmt.Sprintf("exported %d message(s) to your clipboard (OSC 52, %d bytes of JSON lines)", msg.n, msg.bytes))
		return tea.SetClipboard(msg.clip)
	case m.opts.RemoteExport != nil:
		m.setInfo(fmt.Sprintf("exported %d message(s) to %s on the server (%d bytes)", msg.n, msg.path, msg.bytes))
	default:
		m.setInfo(fmt.Sprintf("exported %d message(s) to %s", msg.n, msg.path))
	}
	return nil
}

// errExportTooBig stops encoding an export past its limit.
var errExportTooBig = errors.New("export too big")

// cappedBuffer is a buffer that refuses to grow past max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max int64
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if int64(b.Len()+len(p)) > b.max {
		return 0, errExportTooBig
	}
	return b.Buffer.Write(p)
}

// exportRemote exports msgs for a dashboard served over SSH: to the
// clipboard when small, else to a file in re.Dir when allowed and within
// re.FileMax, else refused; every outcome goes to re.Audit.
func exportRemote(re RemoteExport, entity, name string, msgs []*broker.Message) tea.Cmd {
	if re.ClipboardMax <= 0 {
		re.ClipboardMax = DefaultClipboardMax
	}
	if re.FileMax <= 0 {
		re.FileMax = DefaultExportFileMax
	}
	return func() tea.Msg {
		res := exportRemoteNow(re, name, msgs)
		if re.Audit != nil {
			to := res.path
			if res.err == nil && to == "" {
				to = "clipboard"
			}
			re.Audit(entity, to, res.n, res.bytes, res.err)
		}
		return res
	}
}

// exportRemoteNow does exportRemote's work.
func exportRemoteNow(re RemoteExport, name string, msgs []*broker.Message) exportedMsg {
	limit := int64(re.ClipboardMax)
	if re.Dir != "" {
		limit = max(limit, re.FileMax)
	}
	buf := &cappedBuffer{max: limit}
	w := msgjson.NewWriter(buf)
	var err error
	for _, x := range msgs {
		if err = w.Write(x); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	size := int64(buf.Len())
	switch {
	case errors.Is(err, errExportTooBig) && re.Dir == "":
		return exportedMsg{n: len(msgs), err: fmt.Errorf("export: %d message(s) are more than the %d bytes the clipboard takes over SSH, and no file is written: %s",
			len(msgs), re.ClipboardMax, re.NoFiles)}
	case errors.Is(err, errExportTooBig):
		return exportedMsg{n: len(msgs), err: fmt.Errorf("export: %d message(s) are more than the %d bytes an export file may hold on the server: select fewer",
			len(msgs), re.FileMax)}
	case err != nil:
		return exportedMsg{n: len(msgs), err: fmt.Errorf("export: %w", err)}
	case size <= int64(re.ClipboardMax):
		return exportedMsg{n: len(msgs), clip: buf.String(), bytes: size}
	case re.Dir == "":
		return exportedMsg{n: len(msgs), err: fmt.Errorf("export: %d message(s) are %d bytes, more than the %d the clipboard takes over SSH, and no file is written: %s",
			len(msgs), size, re.ClipboardMax, re.NoFiles)}
	}
	path := filepath.Join(re.Dir, name)
	if err := writeFileExcl(path, buf.Bytes()); err != nil {
		return exportedMsg{path: path, n: len(msgs), err: fmt.Errorf("export: %w", err)}
	}
	return exportedMsg{path: path, n: len(msgs), bytes: size}
}

// writeFileExcl writes b to a new file at path (mode 0600); the file must
// not exist.
func writeFileExcl(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		_ = os.Remove(path)
		return err
	}
	return f.Close()
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
