package model

import (
	"time"

	"github.com/peeklock/peeklock/broker"
)

// tickMsg is a refresh tick; id tells stale ticks (after a change of
// interval) from the current one.
type tickMsg struct{ id int }

// frameMsg is an animation frame for countdowns and flashes.
type frameMsg struct{ id int }

// kickMsg ends the debounce after events asked for a refresh.
type kickMsg struct{ id int }

// eventsMsg carries events read from Client.Events (at least one).
type eventsMsg struct {
	events []broker.Event
	closed bool
}

// paneRequest is what a refresh asks for one pane.
type paneRequest struct {
	index int
	top   int64
	rows  int
	// filter is the filter in force when the request was made.
	filter filterSpec
}

// dueOrder reports whether the window is in due order (the Scheduled
// pane), not in sequence order.
func (r paneRequest) dueOrder() bool { return category(r.index) == broker.CategoryScheduled }

// paneResult is one pane's window.
type paneResult struct {
	req     paneRequest
	msgs    []*broker.Message
	scanned int  // filtered: messages scanned
	partial bool // filtered: the scan limit stopped it
	err     error
}

// refreshMsg is the result of one refresh.
type refreshMsg struct {
	gen      int
	entity   string
	entities []broker.Entity
	listErr  error
	// state and notice come from a broker.StatusReporter ("" otherwise).
	state, notice string
	panes         []paneResult
	at            time.Time
}

// seekMsg is the result of scrolling that needed the broker: a new window
// start for a pane.
type seekMsg struct {
	index  int
	entity string
	top    int64
	// moved is how many rows the window moved (negative: up); cursorTo
	// places the cursor: 0 first row, -1 last row, else keep.
	moved    int64
	cursorTo int
	err      error
}

// lockedMsg is the result of l: messages now held under lock.
type lockedMsg struct {
	address string
	msgs    []*broker.Message
	err     error
	// session is the session lock the command accepted on the way, if any.
	session *broker.SessionLock
}

// settledMsg is the result of settling one held lock.
type settledMsg struct {
	key  heldKey
	kind broker.SettleKind
	err  error
}

// renewedMsg is the result of renewing one held lock.
type renewedMsg struct {
	key   heldKey
	until time.Time
	auto  bool
	err   error
}

// sentMsg is the result of compose or edit-and-send.
type sentMsg struct {
	entity    string
	messageID string
	scheduled []int64
	err       error
}

// cancelledMsg is the result of cancelling scheduled messages.
type cancelledMsg struct {
	entity string
	seqs   []int64
	err    error
}

// exportedMsg is the result of x.
type exportedMsg struct {
	path string
	n    int
	err  error
	// Over SSH: clip is the export for the client's clipboard (path is
	// then ""), bytes its size or the file's.
	clip  string
	bytes int64
	// of says what was exported, for the notice and the purge dialog.
	of exportScope
}

// exportScope is what an export covered: the entity, the pane, whether it
// was the whole pane (nothing selected) or the message in the detail view,
// how many selected messages were found gone, how many of each sub-queue
// it held, and whether it was cancelled part way.
type exportScope struct {
	entity    string
	pane      int
	whole     bool
	one       bool
	gone      []int64
	bySub     [3]int
	cancelled bool
}

// errMsg reports an error of a command that has no better place.
type errMsg struct{ err error }
