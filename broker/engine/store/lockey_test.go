package store

import (
	"math"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// TestLocKeyRoundTrip checks that a packed location gives back the
// location it packs, at the ends of each field's range.
func TestLocKeyRoundTrip(t *testing.T) {
	for _, loc := range []Loc{
		{},
		{Entity: 1, Sub: broker.SubQueueDeadLetter, Seq: 1},
		{Entity: math.MaxUint32, Sub: broker.SubQueueTransferDeadLetter, Seq: math.MaxInt64},
	} {
		if got := keyOf(loc).loc(); got != loc {
			t.Errorf("keyOf(%+v).loc() = %+v", loc, got)
		}
		if got := keyOf(loc).entity(); got != loc.Entity {
			t.Errorf("keyOf(%+v).entity() = %d", loc, got)
		}
	}
}
