package model

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/themes"
)

// t0 is the fake clock's start in every test.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// harness drives a Model the way a Bubble Tea program does, but
// synchronously: commands run in goroutines, their messages come back
// through a channel and are fed to Update until every command left waits
// on the fake clock and nothing is pending. Commands that wait on the fake
// clock stay pending until the test advances it. The model's event reader
// (waitEvents) is not run in a goroutine: the harness keeps it and runs it
// itself once an event is there, so that it never counts as a command that
// might still send something.
type harness struct {
	t       testing.TB
	m       *Model
	clock   *testClock
	running atomic.Int64 // command goroutines not yet done
	eng     *engine.Engine
	msgs    chan tea.Msg
	mu      sync.Mutex
	seen    []tea.Msg // every message handled, for assertions
	clip    []string  // clipboard writes
	reader  tea.Cmd   // the model's armed event reader (under mu)
	// startDelay holds every command goroutine back before it runs its
	// command, as a loaded machine may.
	startDelay time.Duration
}

// isEventReader reports whether cmd is one of the model's event readers:
// a closure of waitEvents, which the compiler names "waitEvents.func1"
// after the function it is inlined into, if any.
func isEventReader(cmd tea.Cmd) bool {
	f := runtime.FuncForPC(reflect.ValueOf(cmd).Pointer())
	return f != nil && strings.Contains(f.Name(), ".waitEvents.func")
}

// newEngine returns an engine on a fake clock with the given queues.
func newEngine(t testing.TB, clock *clockwork.FakeClock, queues ...broker.Entity) *engine.Engine {
	t.Helper()
	eng, err := engine.New(engine.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	for _, q := range queues {
		if err := eng.CreateEntity(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	return eng
}

// commandStartDelay is the startDelay of the harnesses newHarness makes.
var commandStartDelay time.Duration

// newHarness starts a model over c at w×h.
func newHarness(t testing.TB, c broker.Client, clock *clockwork.FakeClock, opts Options, w, h int) *harness {
	t.Helper()
	tc := newTestClock(clock)
	opts.Clock = tc
	if opts.Theme == "" {
		opts.Theme = "dark"
	}
	if opts.Entity == "" && opts.StateDir == "" {
		opts.Entity = "orders"
	}
	hs := &harness{t: t, m: New(c, opts), clock: tc, msgs: make(chan tea.Msg, 4096), startDelay: commandStartDelay}
	if e, ok := c.(*engine.Engine); ok {
		hs.eng = e
	}
	t.Cleanup(hs.m.Close)
	hs.update(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(hs.m.Init())
	hs.settle()
	return hs
}

// run starts cmd like the program does; the event reader is kept for
// deliverEvents instead.
func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if isEventReader(cmd) {
		h.mu.Lock()
		h.reader = cmd
		h.mu.Unlock()
		return
	}
	h.running.Add(1)
	delay := h.startDelay
	go func() {
		defer h.running.Add(-1)
		if delay > 0 {
			time.Sleep(delay) // a loaded machine, for TestSettleWaitsForSlowCommands
		}
		msg := cmd()
		if msg == nil {
			return
		}
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				h.run(c)
			}
			return
		}
		h.msgs <- msg
	}()
}

// clipboardMsgType is the type of the message tea.SetClipboard's command
// returns (unexported in Bubble Tea): the harness records its text.
var clipboardMsgType = reflect.TypeOf(tea.SetClipboard("")())

// update feeds one message to Update and runs the command.
func (h *harness) update(msg tea.Msg) {
	h.mu.Lock()
	h.seen = append(h.seen, msg)
	h.mu.Unlock()
	if v := reflect.ValueOf(msg); v.IsValid() && v.Type() == clipboardMsgType {
		h.clip = append(h.clip, v.String())
	}
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

// deliverEvents runs the armed event reader when an event waits for it
// (it then returns at once, as nothing else reads the channel), and feeds
// its message to Update; it reports whether it did.
func (h *harness) deliverEvents() bool {
	h.mu.Lock()
	reader := h.reader
	ready := reader != nil && h.m.events != nil && len(h.m.events) > 0
	if ready {
		h.reader = nil
	}
	h.mu.Unlock()
	if !ready {
		return false
	}
	h.update(reader())
	return true
}

// settle handles messages and events until every command left is waiting
// on the clock and no message or event is pending. Every command goroutine
// counts in running from its start to its end (a batch's until it has
// started its parts), and one that waits on the clock counts in waiting
// too, so that equality means nothing can arrive but by advancing the
// clock.
func (h *harness) settle() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	quiet := 0
	for time.Now().Before(deadline) {
		select {
		case msg := <-h.msgs:
			h.update(msg)
			quiet = 0
			continue
		default:
		}
		if h.deliverEvents() {
			quiet = 0
			continue
		}
		if h.running.Load() == h.clock.waiting.Load() {
			quiet++
			if quiet > 2 {
				return
			}
		} else {
			quiet = 0
		}
		time.Sleep(100 * time.Microsecond)
	}
	h.t.Fatalf("the model never settled: %d commands running, %d waiting on the clock", h.running.Load(), h.clock.waiting.Load())
}

// pump handles messages for d, whatever is still running (for tests that
// hold a broker call on purpose).
func (h *harness) pump(d time.Duration) {
	end := time.After(d)
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case msg := <-h.msgs:
			h.update(msg)
		case <-poll.C:
			h.deliverEvents()
		case <-end:
			return
		}
	}
}

// key presses a key, given as its String() form ("c", "enter", "shift+tab").
func (h *harness) key(k string) {
	h.t.Helper()
	h.update(keyMsg(k))
	h.settle()
}

// keys presses keys one after the other.
func (h *harness) keys(ks ...string) {
	h.t.Helper()
	for _, k := range ks {
		h.key(k)
	}
}

// typeText types s into whatever has the focus.
func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	h.settle()
}

// advance moves the fake clock, lets the engine process what is due, and
// settles.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	step := 100 * time.Millisecond
	h.settle()
	for d > 0 {
		s := min(step, d)
		h.clock.Advance(s)
		d -= s
		if h.eng != nil {
			h.eng.Tick()
		}
		h.settle()
	}
}

// refresh forces a refresh and waits for it.
func (h *harness) refresh() {
	h.t.Helper()
	h.run(h.m.requestRefresh())
	h.settle()
}

// screen returns the view without styling.
func (h *harness) screen() string { return ansi.Strip(h.m.render()) }

// statusLine returns the status bar: the last line of the screen, with
// the line above it when a long message wrapped onto it (it then starts
// as the status bar does), runs of spaces made one so that wrapped text
// reads whole.
func (h *harness) statusLine() string {
	lines := strings.Split(h.screen(), "\n")
	s := lines[len(lines)-1]
	if n := len(lines); n > 1 && strings.HasPrefix(lines[n-2], " ● ") {
		s = lines[n-2] + " " + s
	}
	return strings.Join(strings.Fields(s), " ")
}

// testClock is the model's clock in tests: the fake clock's time, and
// waits (After) that it counts and fires itself when advanced, so that the
// harness knows when every command left is only waiting for time.
type testClock struct {
	clockwork.Clock
	fake    *clockwork.FakeClock
	mu      sync.Mutex
	waiters []clockWaiter
	waiting atomic.Int64
}

type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

func newTestClock(fake *clockwork.FakeClock) *testClock { return &testClock{Clock: fake, fake: fake} }

// After returns a channel that receives the time once the clock has been
// advanced by d.
func (c *testClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.fake.Now()
	if d <= 0 {
		ch <- now
		return ch
	}
	c.waiters = append(c.waiters, clockWaiter{at: now.Add(d), ch: ch})
	c.waiting.Add(1)
	return ch
}

// Advance moves the fake clock (and so the engine's) and fires the waits
// that are due.
func (c *testClock) Advance(d time.Duration) {
	c.fake.Advance(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.fake.Now()
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(now) {
			c.waiting.Add(-1)
			w.ch <- now
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// keyMsg builds the key press whose String() is k.
func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]tea.KeyPressMsg{
		"enter":     {Code: tea.KeyEnter},
		"esc":       {Code: tea.KeyEscape},
		"tab":       {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
		"space":     {Code: tea.KeySpace, Text: " "},
		"up":        {Code: tea.KeyUp},
		"down":      {Code: tea.KeyDown},
		"pgup":      {Code: tea.KeyPgUp},
		"pgdown":    {Code: tea.KeyPgDown},
		"home":      {Code: tea.KeyHome},
		"end":       {Code: tea.KeyEnd},
		"delete":    {Code: tea.KeyDelete},
		"backspace": {Code: tea.KeyBackspace},
		"ctrl+c":    {Code: 'c', Mod: tea.ModCtrl},
		"ctrl+s":    {Code: 's', Mod: tea.ModCtrl},
	}
	if m, ok := special[k]; ok {
		return m
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// send puts messages into an entity.
func send(t testing.TB, c broker.Client, entity string, msgs ...*broker.Message) {
	t.Helper()
	if err := c.Send(context.Background(), entity, msgs); err != nil {
		t.Fatal(err)
	}
}

// msg returns a small JSON message.
func msg(id, subject string) *broker.Message {
	return &broker.Message{MessageID: id, Subject: subject, ContentType: "application/json",
		Body: []byte(`{"id":"` + id + `"}`)}
}

// testStyles returns the dark styles.
func testStyles() *themes.Styles { return themes.NewStyles(themes.Dark()) }

// TestSettleWaitsForSlowCommands runs TestInfoNoEntity with every command
// goroutine slow to start, as on a loaded machine, where it failed once:
// settle counted the event reader as waiting before it ran, so a batch not
// yet started (Init's: the first refresh among its parts) matched it, and
// settle returned early; the first refresh then came after the key and
// put its own error (entity "orders" not found) in its place.
func TestSettleWaitsForSlowCommands(t *testing.T) {
	commandStartDelay = 2 * time.Millisecond
	t.Cleanup(func() { commandStartDelay = 0 })
	for range 5 {
		TestInfoNoEntity(t)
	}
}
