package model

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// listedEngine is the embedded engine with a fixed list of connected
// clients, as its AMQP listener would report them.
type listedEngine struct {
	*engine.Engine
	conns  []broker.ClientConn
	reads  int
	closed []string // "id: reason" of each CloseClient
}

func (l *listedEngine) Clients(context.Context) ([]broker.ClientConn, error) {
	l.reads++
	return l.conns, nil
}

// CloseClient records the close and drops the connection from the list.
func (l *listedEngine) CloseClient(_ context.Context, id, reason string) error {
	for i, c := range l.conns {
		if c.ID == id {
			l.closed = append(l.closed, id+": "+reason)
			l.conns = append(l.conns[:i:i], l.conns[i+1:]...)
			return nil
		}
	}
	return broker.Errorf(broker.CodeNotFound, "no connection %s", id)
}

// clientsFixture is the info fixture's engine with two connections: an
// application whose receiver holds no credit while "orders" has messages,
// and one that has not authenticated, with a container id carrying escape
// sequences.
func clientsFixture(t *testing.T) (*listedEngine, *clockwork.FakeClock) {
	t.Helper()
	clock, c := infoFixture(t)
	at := clock.Now()
	return &listedEngine{Engine: c.(*engine.Engine), conns: []broker.ClientConn{
		{ID: "a1", Remote: "127.0.0.1:50412", User: "RootManageSharedAccessKey", ContainerID: "orders-worker-7",
			ConnectedAt: at.Add(-3 * time.Minute), Authenticated: true, Links: []broker.ClientLink{
				{Name: "s1", Entity: "orders", Credit: 100, Moved: 3},
				{Name: "r1", Receiver: true, Entity: "orders", Credit: 0, Unsettled: 1, Moved: 1, Waiting: 2},
				{Name: "r2", Receiver: true, Entity: "orders/$DeadLetterQueue", Credit: 10},
			}},
		{ID: "b2", Remote: "10.0.0.9:40000", ContainerID: "evil\x1b[31mred\x1b[0m", ConnectedAt: at.Add(-5 * time.Second)},
	}}, clock
}

// clientsText returns every line of the open clients view, unstyled and
// without trailing spaces.
func clientsText(h *harness) string {
	h.t.Helper()
	if h.m.clients == nil {
		h.t.Fatal("the connected clients view is not open")
	}
	var out []string
	for _, l := range h.m.clients.lines {
		out = append(out, strings.TrimRight(ansi.Strip(l), " "))
	}
	return strings.Join(out, "\n")
}

// The view lists each connection with its links, flags the receiver with
// no credit while messages wait, neutralises the clients' text, reads the
// list again on each refresh tick, and closes with esc or C.
func TestClientsView(t *testing.T) {
	le, hc := clientsFixture(t)
	h := newHarness(t, le, hc, Options{}, 100, 40)
	h.key("C")
	text := clientsText(h)
	wantLines(t, text,
		"2 connection(s), 3 link(s)",
		"⚠ 1 receiver(s) with no credit while messages wait",
		"user RootManageSharedAccessKey · connected 3m ago",
		"container orders-worker-7",
		"  send    orders  credit 100 · unsettled 0 · moved 3",
		"⚠ receive orders  credit 0 · unsettled 1 · moved 1 · waiting 2",
		"  receive orders/$DeadLetterQueue  credit 10 · unsettled 0 · moved 0",
		"user -, not authenticated · connected 5s ago",
		"no links",
	)
	if strings.Contains(strings.Join(h.m.clients.lines, ""), "\x1b[31mred") {
		t.Error("a client's container id reached the screen unsanitised")
	}
	before := le.reads
	h.advance(2 * time.Second)
	if le.reads <= before {
		t.Errorf("the view did not read the list again on a refresh (%d reads)", le.reads)
	}
	h.key("c") // complete: disabled in the view
	if h.m.clients == nil || h.m.bar.err == nil || !strings.Contains(h.m.bar.err.Error(), "not in the connected clients view") {
		t.Errorf("complete in the clients view: %v", h.m.bar.err)
	}
	h.key("esc")
	if h.m.clients != nil {
		t.Fatal("esc did not close the view")
	}
	h.keys("C", "C")
	if h.m.clients != nil {
		t.Fatal("C did not close the view")
	}
}

// On an endpoint that lists no clients (a remote one) the key is disabled
// and says why; a read-only dashboard still lists them.
func TestClientsKeyDisabledRemote(t *testing.T) {
	clock, c := infoFixture(t)
	h := newHarness(t, remoteish{c}, clock, Options{}, 80, 24)
	h.key("C")
	if h.m.clients != nil || h.m.bar.err == nil || !strings.Contains(h.m.bar.err.Error(), "only the embedded broker lists its clients") {
		t.Errorf("C on a remote endpoint: open %v, error %v", h.m.clients != nil, h.m.bar.err)
	}
	le, hc := clientsFixture(t)
	h = newHarness(t, broker.ReadOnly(le), hc, Options{}, 80, 24)
	h.key("C")
	if h.m.clients == nil || !strings.Contains(clientsText(h), "2 connection(s)") {
		t.Error("a read-only dashboard does not list the clients")
	}
}

// remoteish hides every optional interface of the engine, like a remote
// endpoint's client.
type remoteish struct{ broker.Client }

// TestGoldenClients compares the connected clients view at 60x20 and 80x24
// with testdata/TestGoldenClients/*.golden (go test -update rewrites them).
func TestGoldenClients(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			le, hc := clientsFixture(t)
			h := newHarness(t, le, hc, Options{}, size[0], size[1])
			h.key("C")
			t.Run("top", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			h.key("G")
			t.Run("end", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			for i, l := range strings.Split(h.screen(), "\n") {
				if w := ansi.StringWidth(l); w != size[0] {
					t.Fatalf("line %d is %d wide, want %d", i, w, size[0])
				}
			}
		})
	}
}

// In the view, tab selects a connection and X closes it after asking;
// esc in the dialog keeps it; the list is read again.
func TestClientsViewCloses(t *testing.T) {
	le, hc := clientsFixture(t)
	h := newHarness(t, le, hc, Options{}, 100, 40)
	h.key("X")
	if h.m.bar.err == nil || !strings.Contains(h.m.bar.err.Error(), "works in the connected clients view") {
		t.Fatalf("X outside the view: %v", h.m.bar.err)
	}
	h.key("C")
	if !strings.Contains(clientsText(h), "── ▸ 127.0.0.1:50412") {
		t.Fatalf("the first connection is not selected:\n%s", clientsText(h))
	}
	h.key("tab")
	text := clientsText(h)
	if !strings.Contains(text, "── ▸ 10.0.0.9:40000") || strings.Contains(text, "▸ 127.0.0.1") {
		t.Fatalf("tab did not select the second connection:\n%s", text)
	}
	h.key("X")
	if h.m.dialog == nil || !strings.Contains(h.m.dialog.title, "Close the connection from 10.0.0.9:40000") {
		t.Fatal("X does not ask first")
	}
	h.key("esc")
	if len(le.closed) != 0 {
		t.Fatalf("esc closed %v", le.closed)
	}
	h.key("X")
	h.key("y")
	if len(le.closed) != 1 || le.closed[0] != "b2: "+closeReason {
		t.Fatalf("closed %v, want b2", le.closed)
	}
	h.wantStatus("closed the connection from 10.0.0.9:40000 (b2)")
	if text := clientsText(h); !strings.Contains(text, "1 connection(s)") || !strings.Contains(text, "── ▸ 127.0.0.1:50412") {
		t.Errorf("after the close the list is not read again, or nothing is selected:\n%s", text)
	}
}

// A read-only dashboard lists the clients but refuses to close one, and the
// wrapper refuses it too: nothing reaches the endpoint.
func TestClientsViewCloseReadOnly(t *testing.T) {
	le, hc := clientsFixture(t)
	h := newHarness(t, le, hc, Options{ReadOnly: true}, 100, 40)
	h.key("C")
	if strings.Contains(clientsText(h), "▸") {
		t.Error("a read-only view marks a connection to close")
	}
	h.key("X")
	if h.m.dialog != nil || h.m.bar.err == nil || !strings.Contains(h.m.bar.err.Error(), "read-only") {
		t.Errorf("X read-only: dialog %v, error %v", h.m.dialog != nil, h.m.bar.err)
	}
	cc, ok := broker.ClientCloserOf(broker.ReadOnly(le))
	if !ok {
		t.Fatal("no closer through the read-only wrapper")
	}
	if err := cc.CloseClient(context.Background(), "a1", "x"); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("read-only wrapper: %v", err)
	}
	if len(le.closed) != 0 {
		t.Errorf("closed %v in read-only mode", le.closed)
	}
}

// The close dialog wraps its text at 60 columns: nothing is cut.
func TestClientsCloseDialogWraps(t *testing.T) {
	le, hc := clientsFixture(t)
	h := newHarness(t, le, hc, Options{}, 60, 20)
	h.keys("C", "X")
	if h.m.dialog == nil {
		t.Fatal("X does not ask first")
	}
	text := strings.Join(h.m.dialog.text, " ")
	for _, l := range h.m.dialog.text {
		if w := ansi.StringWidth(l); w > h.m.dialog.width {
			t.Errorf("dialog line %q is %d wide, more than %d", l, w, h.m.dialog.width)
		}
	}
	if !strings.Contains(text, "RootManageSharedAccessKey") || !strings.Contains(text, "connect again.") {
		t.Errorf("dialog text %q is not whole", text)
	}
}

// The selection follows its connection when a new list moves it, and a
// list read for a view that has since closed does not reach the one open
// now.
func TestClientsSelectionFollowsList(t *testing.T) {
	le, hc := clientsFixture(t)
	h := newHarness(t, le, hc, Options{}, 100, 40)
	h.keys("C", "tab")
	old := h.m.clients
	a, b := le.conns[0], le.conns[1]
	n := broker.ClientConn{ID: "n3", Remote: "10.0.0.7:1234", ConnectedAt: hc.Now()}
	h.update(clientsMsg{from: old, conns: []broker.ClientConn{n, a, b}})
	h.settle()
	if text := clientsText(h); !strings.Contains(text, "── ▸ 10.0.0.9:40000") || !strings.Contains(text, "10.0.0.7:1234") {
		t.Fatalf("the selection did not follow its connection:\n%s", text)
	}
	h.keys("esc", "C")
	h.update(clientsMsg{from: old, conns: []broker.ClientConn{n}})
	h.settle()
	if text := clientsText(h); strings.Contains(text, "10.0.0.7:1234") || !strings.Contains(text, "2 connection(s)") {
		t.Errorf("a list read for a closed view reached the open one:\n%s", text)
	}
}
