// Package ui renders the dashboard: the entity list, the message panes with
// their lock countdowns, the detail view with bodies rendered by content
// type, the entity information view (settings, times, subscriptions,
// rules), the connected clients view (ClientsLines), dialogs, the progress of bulk work, help and the status bar. Every
// function here is a function of the state it is given, the styles and the
// size; nothing here calls the broker or keeps state between frames.
//
// All text that comes from a message (body, properties, names) passes
// through Sanitize or SanitizeMultiline before it is drawn, so that escape
// sequences and control characters in messages cannot reach the terminal.
package ui
