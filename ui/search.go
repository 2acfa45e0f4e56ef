package ui

import (
	"fmt"
	"time"
)

// SearchProgress is the state of the search for a reply's request, for its
// progress box.
type SearchProgress struct {
	// CorrelationID is the reply's CorrelationId: the MessageId looked for.
	CorrelationID string
	// Entity and Category are where the search is browsing now.
	Entity, Category string
	// Scanned messages so far, of at most Limit.
	Scanned, Limit int
	// At is the 1-based number of the entity being searched, of Entities.
	At, Entities int
	// Likely is set while the entity is one whose messages ask for replies
	// in the reply's entity.
	Likely  bool
	Elapsed time.Duration
}

// SearchDialog renders the progress of the search for a request: what it
// looks for, where it is, how many messages it has browsed of its limit.
func SearchDialog(c *Common, p SearchProgress) Dialog {
	inner := min(60, max(20, c.Width-8))
	frac := 0.0
	if p.Limit > 0 {
		frac = float64(p.Scanned) / float64(p.Limit)
	}
	where := fmt.Sprintf("in %s › %s (entity %d of %d)", Sanitize(p.Entity), p.Category, p.At, p.Entities)
	if p.Likely {
		where += ", likely: ReplyTo seen"
	}
	lines := []string{
		"MessageId = " + Sanitize(p.CorrelationID),
		where,
		ProgressBar(c, frac, inner),
		fmt.Sprintf("%d of at most %d messages browsed, %s", p.Scanned, p.Limit, Short(p.Elapsed)),
	}
	return Dialog{Title: "Looking for the request", Lines: lines, Footer: "esc cancel", Width: inner}
}
