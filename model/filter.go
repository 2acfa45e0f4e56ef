package model

import (
	"context"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgfilter"
)

// filterSpec is the filter of / (package msgfilter, which the command line's
// --filter shares).
type filterSpec struct{ msgfilter.Filter }

// parseFilter parses the text typed after /.
func parseFilter(s string) filterSpec { return filterSpec{msgfilter.Parse(s)} }

// active reports whether a filter is in force.
func (f filterSpec) active() bool { return f.Active() }

func (f filterSpec) equal(g filterSpec) bool { return f == g }

// filteredBrowse browses pages from req.FromSequence and keeps the matches
// until the window is full or scan messages were looked at.
func filteredBrowse(ctx context.Context, c broker.Client, req broker.BrowseRequest, f filterSpec, scan int) (out []*broker.Message, scanned int, partial bool, err error) {
	return msgfilter.Browse(ctx, c, req, f.Filter, scan)
}
