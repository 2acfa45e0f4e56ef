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
// screen, because panes Browse windows sized to themselves.
//
// The views that open over the panes (a dialog, the message log, the help
// screen, the connected clients, the entity information, the detail of a
// message) form one stack, ordered in overlay.go: the view on top takes
// the keys and the mouse and is drawn last, and the key bindings follow
// the view of the main area. The self-contained views are components that
// own their state, take keys in update and draw themselves in view
// (helpScreen, messageLog, infoState). Broker workflows (resubmitting
// chosen dead-lettered messages, the search for a reply's request) live in
// package broker; the model keeps their progress and notices.
package model
