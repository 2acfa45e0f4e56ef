package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/peeklock/peeklock/broker"
)

// numEventKinds bounds the event kinds an entity counts.
const numEventKinds = int(broker.EventReleased) + 1

// count adds one event of kind to the entity's tally: one atomic add, no
// mutex, whether or not anyone subscribes to the event stream.
func (en *entity) count(kind broker.EventKind) {
	if int(kind) < numEventKinds {
		en.tally[kind].Add(1)
	}
}

// EntityStats are an entity's current counts and the message events it has
// seen since the engine opened (counters start at zero on every start and
// when the entity is recreated).
type EntityStats struct {
	Path   string
	Kind   broker.EntityKind
	Counts broker.Counts // zero for a topic: its messages live in its subscriptions
	// Events counts message events by kind (indexed by broker.EventKind).
	Events [numEventKinds]uint64
}

// Event returns the count of events of kind.
func (s *EntityStats) Event(kind broker.EventKind) uint64 {
	if int(kind) < len(s.Events) {
		return s.Events[kind]
	}
	return 0
}

// Stats returns every entity's counts and event counters, sorted by path.
// It takes each entity's mutex once, like Entities; the counters cost the
// operations one atomic add each.
func (e *Engine) Stats(ctx context.Context) ([]EntityStats, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	list := e.entityList()
	out := make([]EntityStats, 0, len(list))
	for _, en := range list {
		st := EntityStats{Path: en.path, Kind: en.kind}
		if err := e.withDue(en, func(int64) error {
			if en.kind != broker.KindTopic {
				st.Counts = en.counts()
			}
			return nil
		}); err != nil {
			continue // deleted meanwhile
		}
		for i := range st.Events {
			st.Events[i] = en.tally[i].Load()
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b EntityStats) int { return strings.Compare(pathKey(a.Path), pathKey(b.Path)) })
	return out, nil
}
