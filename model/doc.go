// Package model is the dashboard's Bubble Tea root model: it holds the
// state (entities, panes with their cursors, scroll windows and selections,
// the locks this dashboard holds, dialogs and bulk work), handles every
// message in Update, and runs all broker I/O in commands. It talks to the
// endpoint only through broker.Client and draws through package ui.
//
// Polling cannot double up: refresh ticks carry an ID and stale ones are
// dropped, a refresh never runs while another is in flight, and events from
// Client.Events are read by one re-armed command. Update and View never
// block and never do I/O; what a frame costs is bounded by what is on
// screen, because panes Browse windows sized to themselves. Work on a
// whole pane (* selecting every message, x and y without a selection)
// pages through it in a job with progress (walk.go), never in Update.
// The cursor names its message by sequence number (cursor.go).
//
// The views that open over the panes (a dialog, the message log, the help
// screen, the connected clients, the entity information, the detail of a
// message) form one stack, ordered in overlay.go: the view on top takes
// the keys and the mouse and is drawn last, and the key bindings follow
// the view of the main area.
//
// Every action of the key map has one row of the action table
// (actiontable.go), keyed by keymap.Action: the capability it needs,
// whether it changes the broker, whether it works on a topic, the views it
// works in, and what it does. updateKeybindings and onKey read it, so a
// key's rules are written once.
//
// Each view is a component that owns its state and draws itself:
// helpScreen, messageLog, infoState (entity information), clientsState
// (connected clients), detailState (one message), dialogState (prompts,
// confirmations, the compose form; the jump dialog's list is filled by
// the root from the entities) and statusLine (what the status bar says of
// its own). A component takes a key in update and says what it did
// (taken, closed, back, submitted) rather than reaching into the root;
// the scrolling views move with scroll and hand their title, lines and
// first line shown to the frame from view. The root Model keeps only what
// crosses between them: opening and closing (the overlay stack), the
// broker calls and their results (a result names the view that asked, so
// one for a view closed since is dropped), what the detail view shows of
// the root (the lock held, the jumps, the dashboard's own actions), and
// the actions on the message a view shows. The bookkeeping of refreshes
// and of the animation frame is one value too (schedule). Broker
// workflows (resubmitting chosen dead-lettered messages, the search for a
// reply's request) live in package broker; the model keeps their progress
// and notices.
package model
