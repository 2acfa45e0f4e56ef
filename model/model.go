package model

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/themes"
	"github.com/peeklock/peeklock/ui"
)

// numPanes is the number of panes (len(broker.Categories)).
const numPanes = len(broker.Categories)

// Model is the dashboard. Create it with New; it implements tea.Model.
type Model struct {
	client   broker.Client
	opts     Options
	clock    clockwork.Clock
	keys     keymap.KeyMap
	caps     broker.Capabilities
	readOnly bool
	// life is the context every call to the client runs under (each with
	// its own timeout, in the command's goroutine); Close ends it, so no
	// call outlives the model. Set in New and never changed.
	life context.Context
	end  context.CancelFunc

	theme      themes.Theme
	themeFixed bool // configured or NO_COLOR: ignore the background colour
	styles     *themes.Styles

	width, height int
	now           time.Time

	// Entities, in the order the endpoint lists them, and the selected one.
	entities []broker.Entity
	entity   string
	// named are the entities the user named (:) on an endpoint that cannot
	// list its own; keepNamed keeps them in entities.
	named []string
	// remembered is set while the entity shown is the one remembered for
	// the endpoint (Options.StateDir), until the list confirms it exists.
	remembered bool
	listed     bool // the first list has arrived
	history    map[string]*depthHistory

	focus int
	panes [numPanes]paneState
	// main is the main screen, under every view: the layout's own state.
	main mainScreen

	// Refresh and events.
	sched      schedule
	paused     bool
	events     <-chan broker.Event
	stopEvents func()
	quitting   bool
	// bar is what the status bar says of its own: the connection, the
	// endpoint's remark, the last error, the passing message.
	bar statusLine

	// Locks held by this dashboard, and rows flashing after a lock ended.
	held   map[heldKey]*heldLock
	ghosts []ghost
	// session is the session lock this dashboard holds (nil for none);
	// sessionBusy is set while a command is accepting one.
	session     *sessionLock
	sessionBusy bool

	// Views over the panes.
	detail *detailState
	// own is what this dashboard did to messages, by message, for the
	// detail view of an endpoint that keeps no history (noteOwn).
	own map[ownKey][]ui.OwnAction
	// entInfo is the open entity information view (nil when closed); it is
	// drawn over the panes and the detail view. entGen counts the entity
	// lists taken, so that the view knows when to render again.
	entInfo *infoState
	entGen  int
	// help is the help screen and log the message log, over the whole
	// screen when open.
	help   helpScreen
	log    messageLog
	dialog *dialogState
	// bulk is the bulk work running, if any.
	bulk bulkWork
	// lastExport is what the last export held (nil: none yet), which the
	// purge dialog compares with what a purge removes.
	lastExport *lastExport
	filter     filterSpec
	jumps      []jump
	// find is the search for a reply's request, with what it learned of
	// where replies go.
	find requestFinder

	// why holds the reason of every disabled binding (updateKeybindings).
	why map[*key.Binding]string

	// clients is the open connected clients view (nil when closed), drawn
	// over the panes like entInfo.
	clients *clientsState
	// above are views that lie over all of the dashboard's own in the stack
	// (none in the dashboard itself: the place of a view kept outside
	// these fields).
	above []view
}

// New returns a dashboard over c.
func New(c broker.Client, opts Options) *Model {
	opts = opts.withDefaults()
	readOnly := opts.ReadOnly || broker.IsReadOnly(c)
	if readOnly && !broker.IsReadOnly(c) {
		c = broker.ReadOnly(c)
	}
	m := &Model{
		client:   c,
		opts:     opts,
		clock:    opts.Clock,
		keys:     opts.KeyMap,
		caps:     c.Capabilities(),
		readOnly: readOnly,
		entity:   opts.Entity,
		history:  make(map[string]*depthHistory),
		held:     make(map[heldKey]*heldLock),
		bar:      statusLine{conn: ui.ConnConnecting},
		width:    80,
		height:   24,
	}
	m.life, m.end = context.WithCancel(context.Background())
	m.now = m.clock.Now()
	if m.entity == "" {
		m.entity = lastEntity(opts.StateDir, c.Endpoint())
		m.remembered = m.entity != ""
	}
	theme, err := themes.Choose(opts.Theme, true, opts.NoColor)
	if err != nil {
		m.bar.fail(err)
	}
	m.themeFixed = opts.NoColor || (opts.Theme != "" && opts.Theme != "auto" && err == nil)
	m.setTheme(theme)
	for i := range m.panes {
		m.panes[i].selected = make(map[int64]bool)
	}
	m.updateKeybindings()
	return m
}

func (m *Model) setTheme(t themes.Theme) {
	m.theme = t
	m.styles = themes.NewStyles(t)
}

// Init asks for the background colour, starts the refresh tick, the first
// refresh and the event reader.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.tickCmd(), m.startRefresh()}
	if !m.themeFixed {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if ch, stop := m.client.Events(); ch != nil {
		m.events, m.stopEvents = ch, stop
		cmds = append(cmds, waitEvents(ch))
	}
	return tea.Batch(cmds...)
}

// Close releases the session lock the dashboard holds, ends the event
// subscription, cancels bulk work and the search for a request, and ends the
// context of every call still running (life). The program
// calls it after Run returns; quitting calls it too.
func (m *Model) Close() {
	m.releaseSessionNow()
	if m.stopEvents != nil {
		m.stopEvents()
		m.stopEvents = nil
	}
	if m.bulk.job != nil && m.bulk.job.cancel != nil {
		m.bulk.job.cancel()
	}
	m.find.end()
	m.end()
}

// setErr records err for the status bar.
func (m *Model) setErr(err error) {
	if err == nil {
		return
	}
	m.bar.fail(err)
	m.log.addErr(m.now, err)
}

// setInfo shows a passing message in the status bar, for infoFor, and
// clears the last error; the message log keeps it.
func (m *Model) setInfo(s string) {
	m.bar.tell(m.now, s)
	m.log.add(m.now, false, s, "")
}

// currentEntity returns the selected entity (ok false before the first list).
func (m *Model) currentEntity() (broker.Entity, bool) {
	for _, e := range m.entities {
		if e.Path == m.entity {
			return e, true
		}
	}
	return broker.Entity{Path: m.entity}, false
}

// lockDuration is the selected entity's lock duration.
func (m *Model) lockDuration() time.Duration {
	e, _ := m.currentEntity()
	return e.Settings.Normalize().LockDuration
}

// layout is the geometry of the screen now: the zoom, the entity list and
// the counts of the entity on screen decide it.
func (m *Model) layout() ui.Layout {
	o := ui.LayoutOptions{Zoom: m.main.zoom, Sidebar: m.main.sidebar}
	if e, ok := m.currentEntity(); ok && m.caps.Supports(broker.CanBrowse) && !e.Counts.Unknown {
		o.Counts = &e.Counts
	}
	return ui.NewLayoutWith(m.width, m.height, m.focus, o)
}

// common is the ui.Common of this frame.
func (m *Model) common() *ui.Common {
	return &ui.Common{Width: m.width, Height: m.height, Styles: m.styles, KeyMap: &m.keys, Now: m.now}
}
