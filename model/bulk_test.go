package model

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// TestBulkWorkShowsProgressStaysLiveAndCancels holds the settlements of a
// bulk complete, checks that the progress box shows and the screen keeps
// refreshing, cancels with esc and reads the report.
func TestBulkWorkShowsProgressStaysLiveAndCancels(t *testing.T) {
	clock, c := fixture(t, 12)
	f := newFault(c)
	h := newHarness(t, f, clock, Options{Concurrency: 2}, 100, 30)
	h.key("L")
	h.key("enter") // lock 10
	h.key("*")     // select the 10 shown
	if n := len(h.m.panes[1].selected); n != 10 {
		t.Fatalf("selected %d", n)
	}
	f.mu.Lock()
	f.settleHold = make(chan struct{})
	f.mu.Unlock()
	h.update(keyMsg("c"))
	h.pump(50 * time.Millisecond)
	if h.m.bulk.job == nil {
		t.Fatal("no job")
	}
	s := h.screen()
	if !strings.Contains(s, "complete 10 messages") || !strings.Contains(s, "0 of 10 done, 0 failed") || !strings.Contains(s, "esc cancel") {
		t.Fatalf("no progress box:\n%s", s)
	}
	// The screen stays live: a message sent meanwhile shows up.
	send(t, c, "orders", msg("late", "late"))
	h.run(h.m.requestRefresh())
	h.pump(50 * time.Millisecond)
	if !strings.Contains(h.screen(), "1 Active 3") {
		t.Fatalf("not live during bulk work:\n%s", h.screen())
	}
	// Let two through, then cancel.
	f.settleHold <- struct{}{}
	f.settleHold <- struct{}{}
	h.pump(50 * time.Millisecond)
	if h.m.bulk.job == nil || h.m.bulk.job.done != 2 {
		t.Fatalf("progress: %+v", h.m.bulk.job)
	}
	clock.Advance(2 * time.Second)
	if s := h.screen(); !strings.Contains(s, "2 of 10 done, 0 failed") {
		t.Fatalf("progress line:\n%s", s)
	}
	h.update(keyMsg("esc"))
	h.pump(100 * time.Millisecond)
	f.mu.Lock()
	close(f.settleHold)
	f.settleHold = nil
	f.mu.Unlock()
	h.settle()
	h.wantReport("complete 10 messages (cancelled): 2 completed,")
	h.wantStatus("complete 10 messages (cancelled): 2 completed")
	// The locks whose settlement was cancelled are still held and can be
	// settled again.
	if n := len(browse(t, c, "orders", broker.CategoryLocked)); n != len(h.m.held) || n < 6 {
		t.Fatalf("engine locks %d, held here %d", n, len(h.m.held))
	}
	for _, hl := range h.m.held {
		if hl.settling {
			t.Fatal("a lock is stuck as settling")
		}
	}
}

func TestProgressDialogRateAndTimeLeft(t *testing.T) {
	c := &ui.Common{Width: 100, Height: 30, Styles: testStyles()}
	d := ui.ProgressDialog(c, ui.Progress{Title: "resubmit", Done: 40, Failed: 10, Total: 100, Elapsed: 10 * time.Second})
	if got := d.Lines[1]; got != "50 of 100 done, 10 failed  5.0/s  10s left" {
		t.Fatalf("%q", got)
	}
}

func TestDepthHistory(t *testing.T) {
	var h depthHistory
	h.add(t0, 5)
	h.add(t0.Add(time.Second), 6) // same bucket: replaces
	h.add(t0.Add(15*time.Second), 9)
	if got := h.vals; len(got) != 4 || got[0] != 6 || got[1] != 6 || got[2] != 6 || got[3] != 9 {
		t.Fatalf("%v", got)
	}
	for i := 0; i < 100; i++ {
		h.add(t0.Add(time.Duration(20+5*i)*time.Second), int64(i))
	}
	if len(h.vals) != historyLen || h.vals[historyLen-1] != 99 {
		t.Fatalf("len %d last %d", len(h.vals), h.vals[len(h.vals)-1])
	}
}

func TestEditKeepsControlCharactersUnlessChanged(t *testing.T) {
	clock, c := fixture(t, 0)
	orig := &broker.Message{MessageID: "id\x1b[1m", Subject: "s\u202e", ContentType: "text/plain", Body: []byte("b\x1b[2J")}
	send(t, c, "orders", orig)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("e")
	d := h.m.dialog
	if d.value(fMessageID) != "id␛[1m" || d.value(fSubject) != "s<U+202E>" || d.body.Value() != "b␛[2J" {
		t.Fatalf("not shown neutralised: %q %q %q", d.value(fMessageID), d.value(fSubject), d.body.Value())
	}
	h.key("ctrl+s")
	act := browse(t, c, "orders", broker.CategoryActive)
	if len(act) != 2 || act[1].MessageID != "id\x1b[1m" || act[1].Subject != "s\u202e" || string(act[1].Body) != "b\x1b[2J" {
		t.Fatalf("copy changed: %+v", act[1])
	}
}

func TestEditKeepsDataSectionsUnlessChanged(t *testing.T) {
	clock, c := fixture(t, 0)
	orig := &broker.Message{MessageID: "sections", ContentType: "text/plain"}
	orig.SetSections([][]byte{[]byte("Hello "), []byte("World")})
	send(t, c, "orders", orig)
	h := newHarness(t, c, clock, Options{}, 100, 30)
	h.key("e")
	if got := h.m.dialog.body.Value(); got != "Hello World" {
		t.Fatalf("body shown %q, want the sections joined", got)
	}
	h.key("ctrl+s")
	act := browse(t, c, "orders", broker.CategoryActive)
	if len(act) != 2 || !slices.Equal(act[1].DataSections, []int{6, 5}) {
		t.Fatalf("unchanged copy: %+v", act[len(act)-1])
	}
	if j := ToJSON(act[1]); !slices.Equal(j.DataSections, []int{6, 5}) {
		t.Fatalf("JSON form: DataSections %v", j.DataSections)
	}

	h.key("e")
	h.m.dialog.body.SetValue("new body")
	h.key("ctrl+s")
	act = browse(t, c, "orders", broker.CategoryActive)
	if len(act) != 3 || string(act[2].Body) != "new body" || act[2].DataSections != nil {
		t.Fatalf("edited copy: %+v", act[len(act)-1])
	}
}
