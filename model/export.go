package model

import (
	"bytes"
	"context"
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

// copyJSON copies messages as JSON to the clipboard (OSC 52): the one in
// the detail view as an object; else the selection of the focused pane, or
// with none the whole pane (all pages, honouring the filter, at most what
// the clipboard takes), as an array, paged in a job.
func (m *Model) copyJSON() tea.Cmd {
	if m.detail != nil {
		return m.copyNow([]*broker.Message{m.detail.msg})
	}
	s := m.scope()
	limit := int64(DefaultClipboardMax)
	if re := m.opts.RemoteExport; re != nil && re.ClipboardMax > 0 {
		limit = int64(re.ClipboardMax)
	}
	what, exportKey := m.scopeWords(s), m.keys.Export.Help().Key
	c, timeout := m.client, m.opts.Timeout
	cmd := m.bulk.start(m, "copy "+what, "copied", m.scopeTotal(s), func(ctx context.Context, report func(jobEvent)) {
		var msgs []*broker.Message
		var size int64
		err := s.walk(ctx, c, timeout, func(page []*broker.Message) error {
			for _, x := range page {
				if s.only == nil { // a whole pane stops at what the clipboard takes
					b, _ := json.Marshal(ToJSON(x))
					size += int64(len(b))
				}
				if size > limit {
					return fmt.Errorf("copy: %s is more than the %d bytes the clipboard takes: select fewer, or press %s to export it to a file",
						what, limit, exportKey)
				}
				msgs = append(msgs, x)
			}
			if len(page) > 0 {
				report(jobEvent{ok: true, count: len(page)})
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			report(jobEvent{err: err, label: "copy"})
			return
		}
		report(jobEvent{result: msgs})
	})
	if cmd == nil {
		return nil // refused: other bulk work is running
	}
	m.bulk.job.finish = func(j *bulkJob) tea.Cmd {
		msgs, _ := j.result.([]*broker.Message)
		switch {
		case j.cancelled:
			m.setInfo("copy: cancelled, nothing copied")
			return nil
		case j.failed > 0:
			m.setErr(errors.New(j.failures[0]))
			return nil
		case len(msgs) == 0:
			m.setInfo(fmt.Sprintf("nothing to copy: %s is empty", paneName(s.pane)))
			return nil
		}
		return m.copyNow(msgs)
	}
	return cmd
}

// copyNow copies msgs as JSON to the clipboard: one object, or an array.
func (m *Model) copyNow(msgs []*broker.Message) tea.Cmd {
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

// scopeWords says what a key acts on in scope s: "the 8 selected
// message(s) of the Dead-lettered pane", "the whole Active pane (nothing
// selected)".
func (m *Model) scopeWords(s paneScope) string {
	if s.only != nil {
		return fmt.Sprintf("the %d selected message(s) of %s", len(s.only), paneName(s.pane))
	}
	w := fmt.Sprintf("the whole %s pane (nothing selected)", category(s.pane))
	if s.filter.active() {
		w = fmt.Sprintf("the whole %s pane that matches the filter (nothing selected)", category(s.pane))
	}
	return w
}

// scopeTotal is how many messages a walk of s will hand over, when known
// (0: unknown), for the progress box.
func (m *Model) scopeTotal(s paneScope) int {
	if s.only != nil {
		return len(s.only)
	}
	if e, ok := m.currentEntity(); ok && !s.filter.active() && !e.Counts.Unknown && !s.isLoc {
		return int(e.Counts.Count(category(s.pane)))
	}
	return 0
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

// export writes messages as JSON lines into ExportDir, or, over SSH,
// exports them as RemoteExport says: the message in the detail view; else
// the selection of the focused pane, or with none the whole pane (all
// pages, honouring the filter), paged in a job with progress. The notice
// says which; selected messages found gone leave the selection.
func (m *Model) export() tea.Cmd {
	name := exportName(m.entity, m.now)
	path := ""
	if m.opts.RemoteExport == nil {
		path = filepath.Join(m.opts.ExportDir, name)
		if abs, err := filepath.Abs(path); err == nil {
			path = abs // the notice says where the file went
		}
	}
	if m.detail != nil {
		msgs := []*broker.Message{m.detail.msg}
		of := exportScope{entity: m.entity, pane: m.detail.pane, one: true}
		of.count(msgs)
		if re := m.opts.RemoteExport; re != nil {
			return exportRemote(*re, m.entity, name, of, func(w *msgjson.Writer) (int, error) { return len(msgs), writeAll(w, msgs) })
		}
		return func() tea.Msg {
			n, err := writeJSONLines(path, func(w *msgjson.Writer) error { return writeAll(w, msgs) })
			return exportedMsg{path: path, n: n, err: err, of: of}
		}
	}
	s := m.scope()
	of := exportScope{entity: m.entity, pane: s.pane, whole: s.only == nil}
	c, timeout, re := m.client, m.opts.Timeout, m.opts.RemoteExport
	what := m.scopeWords(s)
	cmd := m.bulk.start(m, "export "+what, "exported", m.scopeTotal(s), func(ctx context.Context, report func(jobEvent)) {
		found := map[int64]bool{}
		write := func(w *msgjson.Writer) (int, error) {
			err := s.walk(ctx, c, timeout, func(page []*broker.Message) error {
				of.count(page)
				for _, x := range page {
					found[x.SequenceNumber] = true
				}
				if err := writeAll(w, page); err != nil {
					return err
				}
				if len(page) > 0 {
					report(jobEvent{ok: true, count: len(page)})
				}
				return nil
			})
			if ctx.Err() != nil {
				of.cancelled = true
				err = nil
			}
			return len(found), err
		}
		var res exportedMsg
		if re != nil {
			res = exportRemote(*re, of.entity, name, of, write)().(exportedMsg)
		} else {
			n, err := writeJSONLines(path, func(w *msgjson.Writer) error { _, err := write(w); return err })
			res = exportedMsg{path: path, n: n, err: err}
			if n == 0 && err == nil {
				_ = os.Remove(path) // nothing to export: no empty file
				res.path = ""
			}
		}
		for q := range s.only {
			if !found[q] && !of.cancelled {
				of.gone = append(of.gone, q)
			}
		}
		res.of = of
		report(jobEvent{result: res})
	})
	if cmd == nil {
		return nil // refused: other bulk work is running
	}
	m.bulk.job.finish = func(j *bulkJob) tea.Cmd {
		res, ok := j.result.(exportedMsg)
		if !ok {
			m.setErr(fmt.Errorf("export %s: ended without a result", what))
			return nil
		}
		return m.onExported(res)
	}
	return cmd
}

// count adds msgs to the messages of each sub-queue an export held.
func (of *exportScope) count(msgs []*broker.Message) {
	for _, x := range msgs {
		if int(x.SubQueue) < len(of.bySub) {
			of.bySub[x.SubQueue]++
		}
	}
}

// words says what an export covered, for its notice.
func (of exportScope) words() string {
	var parts []string
	if of.whole {
		parts = append(parts, fmt.Sprintf("the whole %s pane: nothing was selected", category(of.pane)))
	}
	if n := len(of.gone); n > 0 {
		parts = append(parts, fmt.Sprintf("%d selected message(s) are gone and left the selection", n))
	}
	if of.cancelled {
		parts = append(parts, "cancelled part way")
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, "; ") + ","
}

// lastExport is what the last export of this dashboard held, for the purge
// dialog.
type lastExport struct {
	entity string
	bySub  [3]int
}

// onExported reports an export; one for the clipboard is sent there now.
// Selected messages it found gone leave the selection.
func (m *Model) onExported(msg exportedMsg) tea.Cmd {
	of := msg.of
	if of.entity == m.entity && len(of.gone) > 0 {
		for _, q := range of.gone {
			delete(m.panes[of.pane].selected, q)
		}
	}
	if msg.err == nil && !of.cancelled {
		m.lastExport = &lastExport{entity: of.entity, bySub: of.bySub}
	}
	words := of.words()
	switch {
	case msg.err != nil:
		m.setErr(msg.err)
	case msg.path == "" && msg.clip == "" && msg.n == 0:
		m.setInfo(fmt.Sprintf("nothing to export: %s is empty", paneName(of.pane)))
	case msg.path == "":
		m.setInfo(fmt.Sprintf("exported %d message(s)%s to your clipboard (OSC 52, %d bytes of JSON lines)", msg.n, words, msg.bytes))
		return tea.SetClipboard(msg.clip)
	case m.opts.RemoteExport != nil:
		m.setInfo(fmt.Sprintf("exported %d message(s)%s to %s on the server (%d bytes)", msg.n, words, msg.path, msg.bytes))
	default:
		m.setInfo(fmt.Sprintf("exported %d message(s)%s to %s", msg.n, words, msg.path))
	}
	return nil
}

// writeAll writes msgs as JSON lines to w.
func writeAll(w *msgjson.Writer, msgs []*broker.Message) error {
	for _, x := range msgs {
		if err := w.Write(x); err != nil {
			return err
		}
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

// exportRemote exports what write writes (it returns how many messages)
// for a dashboard served over SSH: to the clipboard when small, else to a
// file in re.Dir when allowed and within re.FileMax, else refused; every
// outcome goes to re.Audit.
func exportRemote(re RemoteExport, entity, name string, of exportScope, write func(*msgjson.Writer) (int, error)) tea.Cmd {
	if re.ClipboardMax <= 0 {
		re.ClipboardMax = DefaultClipboardMax
	}
	if re.FileMax <= 0 {
		re.FileMax = DefaultExportFileMax
	}
	return func() tea.Msg {
		res := exportRemoteNow(re, name, write)
		res.of = of
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
func exportRemoteNow(re RemoteExport, name string, write func(*msgjson.Writer) (int, error)) exportedMsg {
	limit := int64(re.ClipboardMax)
	if re.Dir != "" {
		limit = max(limit, re.FileMax)
	}
	buf := &cappedBuffer{max: limit}
	w := msgjson.NewWriter(buf)
	n, err := write(w)
	if err == nil {
		err = w.Flush()
	}
	size := int64(buf.Len())
	switch {
	case errors.Is(err, errExportTooBig) && re.Dir == "":
		return exportedMsg{n: n, err: fmt.Errorf("export: %d message(s) or more are more than the %d bytes the clipboard takes over SSH, and no file is written: %s",
			n, re.ClipboardMax, re.NoFiles)}
	case errors.Is(err, errExportTooBig):
		return exportedMsg{n: n, err: fmt.Errorf("export: %d message(s) or more are more than the %d bytes an export file may hold on the server: select fewer",
			n, re.FileMax)}
	case err != nil:
		return exportedMsg{n: n, err: fmt.Errorf("export: %w", err)}
	case n == 0:
		return exportedMsg{}
	case size <= int64(re.ClipboardMax):
		return exportedMsg{n: n, clip: buf.String(), bytes: size}
	case re.Dir == "":
		return exportedMsg{n: n, err: fmt.Errorf("export: %d message(s) are %d bytes, more than the %d the clipboard takes over SSH, and no file is written: %s",
			n, size, re.ClipboardMax, re.NoFiles)}
	}
	path := filepath.Join(re.Dir, name)
	if err := writeFileExcl(path, buf.Bytes()); err != nil {
		return exportedMsg{path: path, n: n, err: fmt.Errorf("export: %w", err)}
	}
	return exportedMsg{path: path, n: n, bytes: size}
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

// writeJSONLines writes, through write, one JSON object per line into a
// new file at path (it must not exist) and returns how many it wrote.
func writeJSONLines(path string, write func(*msgjson.Writer) error) (int, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	w := msgjson.NewWriter(f)
	if err := write(w); err != nil {
		f.Close()
		return w.Count(), fmt.Errorf("export: %w", err)
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
