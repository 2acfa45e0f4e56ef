package model

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// probe wraps the model in a real Bubble Tea program (teatest) and keeps
// the plain text of the last frame for the test to read.
type probe struct {
	*Model
	mu     sync.Mutex
	screen string
}

func (p *probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.Model.Update(msg)
	s := ansi.Strip(p.Model.render())
	p.mu.Lock()
	p.screen = s
	p.mu.Unlock()
	return p, cmd
}

func (p *probe) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.screen
}

// flow is a teatest program over an engine on a fake clock.
type flow struct {
	t     *testing.T
	tm    *teatest.TestModel
	p     *probe
	clock *testClock
	eng   *engine.Engine
}

func newFlow(t *testing.T, opts Options, n int) *flow {
	t.Helper()
	return newFlowSized(t, opts, n, 100, 30, nil)
}

// newFlowSized is newFlow at w×h, with prep run on the engine before the
// program starts (nil: nothing).
func newFlowSized(t *testing.T, opts Options, n, w, h int, prep func(broker.Client)) *flow {
	t.Helper()
	fake, c := fixture(t, n)
	if prep != nil {
		prep(c)
	}
	tc := newTestClock(fake)
	opts.Clock, opts.Entity, opts.Theme = tc, "orders", "dark"
	p := &probe{Model: New(c, opts)}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(w, h))
	f := &flow{t: t, tm: tm, p: p, clock: tc, eng: c.(*engine.Engine)}
	t.Cleanup(func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	})
	f.waitFor("1 Act", "orders")
	return f
}

// waitFor waits until the screen shows every one of wants.
func (f *flow) waitFor(wants ...string) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s := f.p.text()
		ok := true
		for _, w := range wants {
			if !strings.Contains(s, w) {
				ok = false
			}
		}
		if ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("screen never showed %q:\n%s", wants, f.p.text())
}

func (f *flow) press(keys ...string) {
	for _, k := range keys {
		f.tm.Send(keyMsg(k))
	}
}

// advance moves time in small steps, as a running clock would.
func (f *flow) advance(d time.Duration) {
	for d > 0 {
		s := min(100*time.Millisecond, d)
		f.clock.Advance(s)
		f.eng.Tick()
		d -= s
		time.Sleep(2 * time.Millisecond) // let the program take the frame
	}
	// A message that changes nothing makes the program draw a frame at the
	// final time.
	f.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
}

func TestFlowLockCountdownExpiryRedelivery(t *testing.T) {
	f := newFlow(t, Options{}, 1)
	f.press("l")
	f.waitFor("locked 1 message(s): sequence number 1", "2 Locked 1", "30s")
	f.advance(10 * time.Second)
	f.waitFor("20s")
	f.advance(15 * time.Second)
	f.waitFor("5.0s") // tenths in the last ten seconds
	f.advance(5*time.Second + 200*time.Millisecond)
	f.waitFor("EXPIRED", "lock on sequence number 1 expired")
	f.press("1")
	f.waitFor("1 Active 1", "2 Locked 0")
	// Redelivered: back in Active with delivery count 2 (the DC column:
	// one failed delivery, shown plus one as the SDKs show it).
	if !regexp.MustCompile(`o-1\s+order 1\s+\S+\s+2\s+38B`).MatchString(f.p.text()) {
		t.Fatalf("not redelivered with delivery count 2:\n%s", f.p.text())
	}
}

func TestFlowReceiveComplete(t *testing.T) {
	f := newFlow(t, Options{}, 2)
	f.press("l")
	f.waitFor("locked 1 message(s): sequence number 1", "▸◆")
	f.press("c")
	f.waitFor("completed: sequence number 1", "1 Active 1", "2 Locked 0")
}

func TestFlowDeadLetterThenResubmit(t *testing.T) {
	f := newFlow(t, Options{}, 1)
	f.press("l")
	f.waitFor("locked 1 message(s)", "▸◆")
	f.press("d")
	f.waitFor("Dead-letter sequence number 1")
	f.tm.Type("Poison")
	f.press("enter")
	f.tm.Type("cannot parse")
	f.press("enter")
	f.waitFor("dead-lettered: sequence number 1", "5 DLQ 1")
	f.press("5")
	f.waitFor("Poison", "cannot parse")
	// The key right after s acts on the screen: the result is a notice in
	// the status bar, not a box that takes the next key.
	f.press("s", "1")
	f.waitFor("1 resubmitted, 0 failed", "1 Active 1", "5 DLQ 0", "Active 1  rows 1–1")
}

func TestFlowReadOnlyRefusesComplete(t *testing.T) {
	f := newFlow(t, Options{ReadOnly: true}, 1)
	f.press("c")
	f.waitFor("complete is disabled: read-only mode", "READ-ONLY")
	f.press("l")
	f.waitFor("lock next is disabled: read-only mode")
	if n := len(browse(t, f.eng, "orders", broker.CategoryLocked)); n != 0 {
		t.Fatalf("%d locked", n)
	}
}

// TestFlowRealTime runs the dashboard on the real clock for a moment: the
// refresh tick and events keep the screen current without a fake clock.
func TestFlowRealTime(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	if err := eng.CreateEntity(t.Context(), broker.Entity{Path: "live"}); err != nil {
		t.Fatal(err)
	}
	p := &probe{Model: New(eng, Options{Entity: "live", Refresh: 100 * time.Millisecond, Theme: "dark"})}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(100, 30))
	t.Cleanup(func() { _ = tm.Quit(); tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second)) })
	f := &flow{t: t, tm: tm, p: p}
	f.waitFor("1 Active 0")
	send(t, eng, "live", msg("rt-1", "real time"))
	f.waitFor("1 Active 1", "rt-1")
	f.press("l")
	f.waitFor("2 Locked 1", "59s")
}

// TestFlowPhoneTriage drives a real program at a phone's size (60×20)
// through the on-call path: the dead-letter count is on the tab line, 5
// and enter show why the message is there, z zooms, : jumps to another
// entity, m shows the message log.
func TestFlowPhoneTriage(t *testing.T) {
	fake, c := fixture(t, 2)
	deadLetterOne(t, c, "SchemaValidationFailed", longDescription)
	tc := newTestClock(fake)
	p := &probe{Model: New(c, Options{Clock: tc, Entity: "orders", Theme: "dark"})}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(60, 20))
	t.Cleanup(func() { _ = tm.Quit(); tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second)) })
	f := &flow{t: t, tm: tm, p: p, clock: tc, eng: c.(*engine.Engine)}
	f.waitFor("5 DLQ 1", "Dead-lettered 1")
	f.press("5")
	// The focused pane's window is read when it gets the focus: enter
	// waits for its row (at this size the other panes show no rows).
	f.waitFor("Dead-lettered 1  rows 1–1")
	f.press("enter")
	f.waitFor("Why it is dead-lettered", "SchemaValidationFailed", "Description")
	if all := joined(f.p.text()); !strings.Contains(all, longDescription[:40]) {
		t.Fatalf("the description is not on screen:\n%s", f.p.text())
	}
	f.press("esc")
	f.waitFor("Dead-lettered 1  rows 1–1")
	f.press("z")
	f.waitFor("ZOOM")
	f.press("z", ":")
	f.waitFor("Jump to an entity")
	f.tm.Type("pay")
	f.press("enter")
	f.waitFor("LIVE ⟳ 1s payments", "1 Act 0")
	f.press("m")
	f.waitFor("Message log", "zoomed on the Dead-lettered pane")
	f.press("m")
}
