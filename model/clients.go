package model

import (
	"context"

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
		cs.view.Err, cs.view.Conns = "", msg.conns
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
	cs.lines = ui.ClientsLines(m.common(), cs.view, w)
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
	return nil, k.Scroll(msg, &m.clients.top, m.clientsMaxTop(), m.viewPage())
}

// clientsHelp is the one-line key help of the view.
func (m *Model) clientsHelp() []key.Binding {
	k := &m.keys
	return []key.Binding{k.Back, k.Down, k.Bottom, k.Help, k.Quit}
}
