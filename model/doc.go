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
// The main screen (the panes) and the views that open over it (a dialog,
// the message log, the help screen, the connected clients, the entity
// information, the detail of a message) implement one contract, view
// (overlay.go): take a key, take a click or the wheel, draw its part of
// the frame, say whether it is open and whether it lets the main actions
// through. The open ones form one ordered stack (Model.stack): the view on
// top takes the keys and the mouse and is drawn last, and the key bindings
// follow the view of the main area. Keys, the mouse, the frame and the
// bindings each go down the stack in one loop, so a new view is one file
// and one line of the stack.
//
// Every action of the key map has one row of the action table
// (actiontable.go), keyed by keymap.Action: the capability it needs,
// whether it changes the broker, whether it works on a topic, the views it
// works in, and what it does. updateKeybindings and the main screen's key
// read it, so a key's rules are written once.
//
// Each view is a component that owns its state and draws itself:
// helpScreen, messageLog, infoState (entity information), clientsState
// (connected clients), detailState (one message), dialogState (prompts,
// confirmations, the compose form, the jump dialog's list of entities)
// and mainScreen (the panes and the layout). A component's own logic
// takes a key in update and says what it did (taken, closed, back,
// submitted) rather than reaching into the root; its view methods, its
// broker calls and their results are methods of its own type that take
// the root model for what the view shows and acts on beside its own
// state, and the action that opens it sits in its file. The work that
// floats over the views is a value of its own too, whose progress the
// main screen draws: bulkWork (a job) and requestFinder (the search for a
// reply's request); so is statusLine (what the status bar says of its
// own).
// The root Model keeps only what crosses between them: which views are
// open (the stack), the broker calls and their results (a result names
// the view that asked, so one for a view closed since is dropped), the
// locks held, the jumps, the dashboard's own actions, and the actions on
// the message a view shows. The bookkeeping of refreshes and of the
// animation frame is one value too (schedule). Broker workflows
// (resubmitting chosen dead-lettered messages, the search for a reply's
// request) live in package broker; the model keeps their progress and
// notices.
package model
