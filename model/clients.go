package model

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/ui"
)

// noClientsReason is why the connected clients key is disabled on an
// endpoint that does not list its clients.
const noClientsReason = "only the embedded broker lists its clients: Service Bus shows none"

// clientsState is the connected clients view, a component: it owns its
// list, selection, scroll position and rendered lines, reads the list
// through its own lister, takes its keys in update and draws itself in
// view. The root model opens it, starts its reads (on opening and on every
// refresh tick while open) and closes a connection on confirmation. Its
// lines are rendered when the list, the width, the theme or the second
// (ages move) changes.
type clientsState struct {
	top    int
	busy   bool // a read is under way
	list   ui.Clients
	lines  []string
	width  int
	dirty  bool
	at     int64 // the time (unix s) the lines were rendered at: ages move
	lister broker.ClientLister
	// closer closes the selected connection (nil: the endpoint cannot);
	// starts are the title lines of the connections, to scroll to the
	// selected one.
	closer broker.ClientCloser
	starts []int
}

// closedClientMsg is the result of closing a connection from the view.
type closedClientMsg struct {
	id, remote string
	err        error
}

// clientsMsg is a list of connected clients read for the view from.
type clientsMsg struct {
	from  *clientsState
	conns []broker.ClientConn
	err   error
}

// newClients returns a clients view over lister; closer (nil for none)
// closes connections, when closable.
func newClients(lister broker.ClientLister, closer broker.ClientCloser, closable bool) *clientsState {
	cs := &clientsState{lister: lister, closer: closer, dirty: true}
	cs.list.Closable = closer != nil && closable
	return cs
}

// read starts reading the list, under the root's life, unless a read is
// under way or the view is closed (nil then): on opening and on every
// refresh tick.
func (cs *clientsState) read(m *Model) tea.Cmd {
	if cs == nil || cs.busy {
		return nil
	}
	cs.busy = true
	cl, life, timeout := cs.lister, m.life, m.opts.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(life, timeout)
		defer cancel()
		conns, err := cl.Clients(ctx)
		return clientsMsg{from: cs, conns: conns, err: err}
	}
}

// take takes a list read for the view; the selection follows its
// connection when the list changes. One read for a view that has closed
// (nil) or was replaced is dropped.
func (cs *clientsState) take(msg clientsMsg) {
	if cs == nil || msg.from != cs {
		return
	}
	cs.busy = false
	cs.list.Loaded = true
	if msg.err != nil {
		cs.list.Err = msg.err.Error()
	} else {
		var id string
		if v := cs.list; v.Selected < len(v.Conns) {
			id = v.Conns[v.Selected].ID
		}
		cs.list.Err, cs.list.Conns = "", msg.conns
		cs.list.Selected = max(0, min(cs.list.Selected, len(msg.conns)-1))
		for i, c := range msg.conns {
			if c.ID == id {
				cs.list.Selected = i
			}
		}
	}
	cs.dirty = true
}

// renderLines renders the view's lines again, width cells wide, when what
// they show changed; page is how many lines show at once.
func (cs *clientsState) renderLines(c *ui.Common, width, page int) {
	if cs.lines != nil && !cs.dirty && cs.width == width && cs.at == c.Now.Unix() {
		return
	}
	cs.width, cs.at, cs.dirty = width, c.Now.Unix(), false
	k := c.KeyMap
	cs.list.Hint = k.NextPane.Help().Key + " selects a connection (▸), " + k.CloseClient.Help().Key + " closes it"
	cs.lines, cs.starts = ui.ClientsLines(c, cs.list, width)
	cs.top = min(cs.top, cs.maxTop(page))
}

// maxTop is the last useful scroll position of the view when page lines
// show at once.
func (cs *clientsState) maxTop(page int) int { return max(0, len(cs.lines)-page) }

// update takes a key: esc or the clients key close the view (closed), the
// pane keys move the selection, the moving keys scroll it by page lines;
// taken is false for the others, which fall through to the main actions
// (disabled while the view is open, but for closing a connection).
func (cs *clientsState) update(msg tea.KeyPressMsg, c *ui.Common, width, page int) (taken, closed bool) {
	k := c.KeyMap
	if keymap.Pressed(msg, k.Back) || keymap.Pressed(msg, k.Clients) {
		return true, true
	}
	if keymap.Pressed(msg, k.NextPane) || keymap.Pressed(msg, k.PrevPane) {
		cs.selectNext(keymap.Pressed(msg, k.NextPane), c, width, page)
		return true, false
	}
	return k.Scroll(msg, &cs.top, cs.maxTop(page), page), false
}

// selectNext moves the selection to the next (or previous) connection,
// round, and scrolls its title into sight.
func (cs *clientsState) selectNext(next bool, c *ui.Common, width, page int) {
	n := len(cs.list.Conns)
	if n == 0 {
		return
	}
	d := n - 1
	if next {
		d = 1
	}
	cs.list.Selected = (cs.list.Selected + d) % n
	cs.dirty = true
	cs.renderLines(c, width, page)
	if s := cs.list.Selected; s < len(cs.starts) {
		cs.top = min(max(0, cs.starts[s]-1), cs.maxTop(page))
	}
}

// scroll moves the view by d lines (the mouse wheel).
func (cs *clientsState) scroll(d, page int) { cs.top = max(0, min(cs.maxTop(page), cs.top+d)) }

// selected returns the selected connection (ok false when there is none).
func (cs *clientsState) selected() (broker.ClientConn, bool) {
	if cs.list.Selected >= len(cs.list.Conns) {
		return broker.ClientConn{}, false
	}
	return cs.list.Conns[cs.list.Selected], true
}

// view is what the view draws: its title line, its one-line key help, its
// lines and the first one shown.
func (cs *clientsState) view(k *keymap.KeyMap) (title string, help []key.Binding, lines []string, top int) {
	help = []key.Binding{k.Back, k.Down, k.Bottom, k.Help, k.Quit}
	if cs.list.Closable {
		sel := key.NewBinding(key.WithKeys(k.NextPane.Keys()...), key.WithHelp(k.NextPane.Help().Key, "select"))
		closeKey := key.NewBinding(key.WithKeys(k.CloseClient.Keys()...), key.WithHelp(k.CloseClient.Help().Key, "close it"))
		help = []key.Binding{k.Back, sel, closeKey, k.Help, k.Quit, k.Down}
	}
	return "connected clients", help, cs.lines, min(cs.top, max(0, len(cs.lines)-1))
}

// openClients opens the connected clients view.
func openClients(m *Model) tea.Cmd {
	cl, ok := broker.ClientsOf(m.client)
	if !ok {
		return m.refuse(&m.keys.Clients, noClientsReason)
	}
	var closer broker.ClientCloser
	if cc, ok := broker.ClientCloserOf(m.client); ok {
		closer = cc
	}
	m.clients = newClients(cl, closer, !m.readOnly)
	return m.clients.read(m)
}

// sync renders the open view's lines again when what they show changed.
// Update calls it after every message; a closed view (nil) does nothing.
func (cs *clientsState) sync(m *Model) {
	if cs != nil {
		l := m.layout()
		cs.renderLines(m.common(), l.Main.W, viewPage(l))
	}
}

// closeClient asks to confirm closing the selected connection of the
// view, then closes it. The key is disabled outside the view and in
// read-only mode.
func closeClient(m *Model) tea.Cmd {
	cs := m.clients
	if cs == nil || cs.closer == nil {
		return m.refuse(&m.keys.CloseClient, noClientsReason)
	}
	cc, ok := cs.selected()
	if !ok {
		return m.refuse(&m.keys.CloseClient, "no connection here")
	}
	remote := ui.Sanitize(cc.Remote)
	d := newDialog(dlgConfirm, "Close the connection from "+remote, m.width)
	who := "container " + ui.Sanitize(cc.ContainerID)
	if cc.ContainerID == "" {
		who = "no container id"
	}
	if cc.User != "" {
		who += ", user " + ui.Sanitize(cc.User)
	}
	for _, p := range []string{
		"This closes " + remote + " (" + who + ", " + fmt.Sprint(len(cc.Links)) + " link(s)).",
		"The application gets amqp:connection:forced \"closed by operator: " + closeReason +
			"\"; its session locks are given back, and it may connect again.",
	} {
		d.text = append(d.text, ui.Wrap(p, d.width)...)
	}
	d.footer = "enter or y close it · esc keep it"
	closer, timeout, id := cs.closer, m.opts.Timeout, cc.ID
	d.submit = func(*dialogState) (tea.Cmd, error) {
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(m.life, timeout)
			defer cancel()
			return closedClientMsg{id: id, remote: remote, err: closer.CloseClient(ctx, id, closeReason)}
		}, nil
	}
	m.dialog = d
	return nil
}

// closeReason is what the application is told, after "closed by
// operator", when it is closed from the view.
const closeReason = "from the peeklock dashboard"

// onClosed reports a close and reads the list again, when the view is
// still open (not nil).
func (cs *clientsState) onClosed(m *Model, msg closedClientMsg) tea.Cmd {
	if msg.err != nil {
		m.setErr(msg.err)
	} else {
		m.setInfo("closed the connection from " + msg.remote + " (" + msg.id + ")")
	}
	return cs.read(m)
}

// id names the connected clients view.
func (cs *clientsState) id() overlay { return overClients }

// isOpen reports whether the view is open (not nil).
func (cs *clientsState) isOpen() bool { return cs != nil }

// modal is false: the keys the view does not take fall through to the
// main actions, disabled while it is open but for closing a connection.
func (cs *clientsState) modal() bool { return false }

// key scrolls the view, moves its selection, or closes it.
func (cs *clientsState) key(m *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	l := m.layout()
	taken, closed := cs.update(msg, m.common(), l.Main.W, viewPage(l))
	if closed {
		m.clients = nil
	}
	return nil, taken
}

// click takes the clicks on the main area, which the view covers.
func (cs *clientsState) click(m *Model, ms tea.Mouse) (tea.Cmd, bool) {
	return nil, inMainArea(m, ms.X, ms.Y)
}

// wheel scrolls the view.
func (cs *clientsState) wheel(m *Model, _ tea.Mouse, delta int) (tea.Cmd, bool) {
	cs.scroll(delta, viewPage(m.layout()))
	return nil, true
}

// close closes the view.
func (cs *clientsState) close(m *Model) { m.clients = nil }

// frame draws the view, with its own one-line help, in the main area.
func (cs *clientsState) frame(m *Model, _ *ui.Common, s *ui.Screen) {
	s.DetailOpen = true
	s.DetailTitle, s.Help, s.DetailLines, s.DetailTop = cs.view(&m.keys)
}
