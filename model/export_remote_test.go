package model

import (
	"bytes"
	"encoding/base64"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"
)

// exportAudit records RemoteExport.Audit calls.
type exportAudit struct {
	mu    sync.Mutex
	lines []string
}

func (a *exportAudit) record(entity, to string, n int, size int64, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := entity + " → " + to
	if err != nil {
		s += " refused"
	}
	a.lines = append(a.lines, s)
}

func (a *exportAudit) get() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.lines...)
}

// Over SSH (RemoteExport) a small export is written to the program's
// output as an OSC 52 sequence whose base64 payload is the JSON line;
// nothing is written to disk.
func TestFlowRemoteExportOSC52(t *testing.T) {
	cwd, _ := os.Getwd()
	before, _ := os.ReadDir(cwd)
	var audit exportAudit
	f := newFlow(t, Options{RemoteExport: &RemoteExport{Audit: audit.record}}, 1)
	f.press("x")
	f.waitForText("exported 1 message(s), the whole Active pane: nothing was selected, to your clipboard (OSC 52")
	want := "\x1b]52;c;"
	var payload string
	teatest.WaitFor(t, f.tm.Output(), func(b []byte) bool {
		i := bytes.Index(b, []byte(want))
		if i < 0 {
			return false
		}
		rest := b[i+len(want):]
		end := bytes.IndexAny(rest, "\x07\x1b")
		if end < 0 {
			return false
		}
		payload = string(rest[:end])
		return true
	}, teatest.WithDuration(5*time.Second))
	line, err := base64.StdEncoding.DecodeString(payload)
	if err != nil || !strings.Contains(string(line), `"MessageId":"o-1"`) || !strings.HasSuffix(string(line), "\n") {
		t.Fatalf("OSC 52 payload %q decodes to %q (%v), want the JSON line of o-1", payload, line, err)
	}
	if got := audit.get(); len(got) != 1 || got[0] != "orders → clipboard" {
		t.Errorf("audit %v", got)
	}
	if after, _ := os.ReadDir(cwd); len(after) != len(before) {
		t.Errorf("an export over SSH wrote into the working directory")
	}
}

// Too large for the clipboard and no file allowed: refused, saying why.
func TestRemoteExportTooLargeRefused(t *testing.T) {
	clock, c := fixture(t, 3)
	var audit exportAudit
	h := newHarness(t, c, clock, Options{RemoteExport: &RemoteExport{ClipboardMax: 50, NoFiles: "read-only key", Audit: audit.record}}, 200, 30)
	h.key("x")
	h.wantErr("more than the 50 bytes the clipboard takes over SSH, and no file is written: read-only key")
	if got := audit.get(); len(got) != 1 || got[0] != "orders →  refused" {
		t.Errorf("audit %v", got)
	}
}
