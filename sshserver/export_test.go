package sshserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// exportEngine holds in orders: m-1 (small), big (3,000-byte body) and huge
// (20,000-byte body), in that order.
func exportEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e := newEngine(t, 1)
	for _, m := range []*broker.Message{
		{MessageID: "big", Body: []byte(strings.Repeat("b", 3000))},
		{MessageID: "huge", Body: []byte(strings.Repeat("h", 20000))},
	} {
		if err := e.Send(context.Background(), "orders", []*broker.Message{m}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// exportLimits: the clipboard takes 1,000 bytes, a file 10,000.
func exportLimits(dir string) func(*Config) {
	return func(c *Config) {
		c.ExportDir, c.ClipboardMaxBytes, c.ExportMaxBytes = dir, 1000, 10000
	}
}

// clipboardPayloads returns the decoded payloads of the OSC 52 sequences
// ("ESC ] 52 ; c ; BASE64" ended by BEL or ST) in raw output.
func clipboardPayloads(t *testing.T, raw string) []string {
	t.Helper()
	var out []string
	for {
		i := strings.Index(raw, "\x1b]52;c;")
		if i < 0 {
			return out
		}
		raw = raw[i+len("\x1b]52;c;"):]
		end := strings.IndexAny(raw, "\x07\x1b")
		if end < 0 {
			t.Fatalf("an unterminated OSC 52 sequence: %q", raw)
		}
		b, err := base64.StdEncoding.DecodeString(raw[:end])
		if err != nil {
			t.Fatalf("OSC 52 payload %q: %v", raw[:end], err)
		}
		out = append(out, string(b))
	}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// A read-only key's small export goes to the client's clipboard as an OSC
// 52 sequence carrying the JSON line in base64; a larger one is refused and
// no file is written on the server, even with an export directory
// configured. Both are audited.
func TestExportReadOnlyKeyClipboardOnly(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, exportEngine(t), exportLimits(dir))
	term := openTerm(t, ts.mustDial(ts.reader), 200, 30)
	term.waitScreen(waitLong, "m-1", "Active 3")
	term.press(" x") // x exports the selection (with none, the whole pane)
	term.waitScreen(waitLong, "exported 1 message(s) to your clipboard (OSC 52")
	waitUntil(t, waitLong, "the OSC 52 sequence", func() bool { return len(clipboardPayloads(t, term.raw.String())) == 1 })
	clip := clipboardPayloads(t, term.raw.String())[0]
	var m map[string]any
	if err := json.Unmarshal([]byte(clip), &m); err != nil || m["MessageId"] != "m-1" || !strings.HasSuffix(clip, "\n") {
		t.Fatalf("clipboard %q (%v), want the JSON line of m-1", clip, err)
	}
	term.press(" ") // and big (the cursor moved to it): too large for the clipboard
	term.press("x")
	term.waitScreen(waitLong, "a read-only key exports to the clipboard only")
	if got := clipboardPayloads(t, term.raw.String()); len(got) != 1 {
		t.Errorf("%d clipboard sequences, want the first only", len(got))
	}
	if f := files(t, dir); len(f) != 0 {
		t.Errorf("a read-only key wrote %v on the server", f)
	}
	lines := ts.audit.lines(t)
	if len(lines) != 2 || lines[0]["op"] != "export" || lines[0]["to"] != "clipboard" || lines[0]["result"] != "ok" ||
		lines[0]["entity"] != "orders" || lines[0]["messages"] != 1.0 ||
		lines[1]["op"] != "export" || lines[1]["to"] != "" || lines[1]["level"] != "WARN" {
		t.Fatalf("audit = %v, want an export to the clipboard and a refused one", lines)
	}
}

// An operator's export too large for the clipboard is written into the
// configured directory, named in the notice and the audit line; one past the
// file limit is refused and writes nothing.
func TestExportOperatorWritesFileInExportDir(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, exportEngine(t), exportLimits(dir))
	term := openTerm(t, ts.mustDial(ts.operator), 200, 30)
	term.waitScreen(waitLong, "m-1", "Active 3")
	term.press("j")
	term.press(" x") // x exports the selection (with none, the whole pane)
	term.waitScreen(waitLong, "exported 1 message(s) to "+dir)
	f := files(t, dir)
	if len(f) != 1 || !strings.HasPrefix(f[0], "peeklock-orders-") || !strings.HasSuffix(f[0], ".jsonl") {
		t.Fatalf("files %v, want one export", f)
	}
	path := filepath.Join(dir, f[0])
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"MessageId":"big"`) {
		t.Fatalf("export file: %v, %.80q", err, b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("export file mode %v, want 0600", st.Mode().Perm())
	}
	term.press(" ") // and huge (the cursor moved to it): past the file limit
	term.press("x")
	term.waitScreen(waitLong, "more than the 10000 bytes an export file may hold")
	if f := files(t, dir); len(f) != 1 {
		t.Errorf("files %v after a refused export, want the first only", f)
	}
	lines := ts.audit.lines(t)
	if len(lines) != 2 || lines[0]["op"] != "export" || lines[0]["to"] != path || lines[0]["result"] != "ok" || lines[0]["bytes"] != float64(len(b)) ||
		lines[1]["to"] != "" || lines[1]["level"] != "WARN" {
		t.Fatalf("audit = %v, want the file %s and a refused export", lines, path)
	}
	if got := clipboardPayloads(t, term.raw.String()); len(got) != 0 {
		t.Errorf("clipboard sequences %q, want none", got)
	}
}

// Without an export directory an operator's large export is refused with
// the setting to configure.
func TestExportOperatorWithoutExportDir(t *testing.T) {
	ts := startServer(t, exportEngine(t), exportLimits(""))
	term := openTerm(t, ts.mustDial(ts.operator), 200, 30)
	term.waitScreen(waitLong, "m-1", "Active 3")
	term.press("jx")
	term.waitScreen(waitLong, "the server has no export directory")
}
