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
package model
