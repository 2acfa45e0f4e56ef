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

// clientsState is the open connected clients view. It reads the list when
// it opens and on every refresh tick while open; its lines are rendered
// when the list, the width or the theme changes.
type clientsState struct {
	top    int
	seq    int
	busy   bool
	view   ui.Clients
	lines  []string
	width  int
	dirty  bool
	at     int64 // m.now (unix s) the lines were rendered at: ages move
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

// clientsMsg is a list of connected clients read for the view.
type clientsMsg struct {
	seq   int
	conns []broker.ClientConn
	err   error
}

// openClients opens the connected clients view.
func (m *Model) openClients() tea.Cmd {
	cl, ok := broker.ClientsOf(m.client)
	if !ok {
		return m.refuse(&m.keys.Clients, noClientsReason)
	}
	m.clients = &clientsState{lister: cl, dirty: true}
	if cc, ok := broker.ClientCloserOf(m.client); ok {
		m.clients.closer = cc
	}
	return m.readClients()
}

// readClients starts reading the list unless a read is under way.
func (m *Model) readClients() tea.Cmd {
	cs := m.clients
	if cs == nil || cs.busy {
		return nil
	}
	m.clientsSeq++
	cs.seq, cs.busy = m.clientsSeq, true
	seq, cl, timeout := cs.seq, cs.lister, m.opts.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		conns, err := cl.Clients(ctx)
		return clientsMsg{seq: seq, conns: conns, err: err}
	}
}

// onClients takes a list read for the view; one for a view that has closed
// or was replaced is dropped.
func (m *Model) onClients(msg clientsMsg) {
	cs := m.clients
	if cs == nil || msg.seq != cs.seq {
		return
	}
	cs.busy = false
	cs.view.Loaded = true
	if msg.err != nil {
		cs.view.Err = msg.err.Error()
	} else {
		// The selection follows its connection when the list changes.
		var id string
		if v := cs.view; v.Selected < len(v.Conns) {
			id = v.Conns[v.Selected].ID
		}
		cs.view.Err, cs.view.Conns = "", msg.conns
		cs.view.Selected = max(0, min(cs.view.Selected, len(msg.conns)-1))
		for i, c := range msg.conns {
			if c.ID == id {
				cs.view.Selected = i
			}
		}
	}
	cs.dirty = true
}

// syncClients renders the view's lines again when what they show changed.
// Update calls it after every message.
func (m *Model) syncClients() {
	cs := m.clients
	if cs == nil {
		return
	}
	w := m.layout().Main.W
	if cs.lines != nil && !cs.dirty && cs.width == w && cs.at == m.now.Unix() {
		return
	}
	cs.width, cs.at, cs.dirty = w, m.now.Unix(), false
	k := &m.keys
	cs.view.Closable = cs.closer != nil && !m.readOnly
	cs.view.Hint = k.NextPane.Help().Key + " selects a connection (▸), " + k.CloseClient.Help().Key + " closes it"
	cs.lines, cs.starts = ui.ClientsLines(m.common(), cs.view, w)
	cs.top = min(cs.top, m.clientsMaxTop())
}

// clientsMaxTop is the last useful scroll position of the view.
func (m *Model) clientsMaxTop() int { return m.viewMaxTop(len(m.clients.lines)) }

// clientsKey handles the keys that scroll or close the view; other keys
// fall through to the main actions, disabled while it is open.
func (m *Model) clientsKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := &m.keys
	if keymap.Pressed(msg, k.Back) || keymap.Pressed(msg, k.Clients) {
		m.clients = nil
		return nil, true
	}
	if keymap.Pressed(msg, k.NextPane) || keymap.Pressed(msg, k.PrevPane) {
		m.selectClient(keymap.Pressed(msg, k.NextPane))
		return nil, true
	}
	return nil, k.Scroll(msg, &m.clients.top, m.clientsMaxTop(), m.viewPage())
}

// selectClient moves the view's selection to the next (or previous)
// connection, round, and scrolls its title into sight.
func (m *Model) selectClient(next bool) {
	cs := m.clients
	n := len(cs.view.Conns)
	if n == 0 {
		return
	}
	d := n - 1
	if next {
		d = 1
	}
	cs.view.Selected = (cs.view.Selected + d) % n
	cs.dirty = true
	m.syncClients()
	if s := cs.view.Selected; s < len(cs.starts) {
		cs.top = min(max(0, cs.starts[s]-1), m.clientsMaxTop())
	}
}

// closeClient asks to confirm closing the selected connection, then closes
// it. The key is disabled outside the view and in read-only mode.
func (m *Model) closeClient() tea.Cmd {
	cs := m.clients
	if cs == nil || cs.closer == nil {
		return m.refuse(&m.keys.CloseClient, noClientsReason)
	}
	if cs.view.Selected >= len(cs.view.Conns) {
		return m.refuse(&m.keys.CloseClient, "no connection here")
	}
	cc := cs.view.Conns[cs.view.Selected]
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
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
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

// onClosedClient reports a close and reads the list again.
func (m *Model) onClosedClient(msg closedClientMsg) tea.Cmd {
	if msg.err != nil {
		m.setErr(msg.err)
	} else {
		m.setInfo("closed the connection from " + msg.remote + " (" + msg.id + ")")
	}
	return m.readClients()
}

// clientsHelp is the one-line key help of the view.
func (m *Model) clientsHelp() []key.Binding {
	k := &m.keys
	if m.clients != nil && m.clients.view.Closable {
		sel := key.NewBinding(key.WithKeys(k.NextPane.Keys()...), key.WithHelp(k.NextPane.Help().Key, "select"))
		closeKey := key.NewBinding(key.WithKeys(k.CloseClient.Keys()...), key.WithHelp(k.CloseClient.Help().Key, "close it"))
		return []key.Binding{k.Back, sel, closeKey, k.Help, k.Quit, k.Down}
	}
	return []key.Binding{k.Back, k.Down, k.Bottom, k.Help, k.Quit}
}
