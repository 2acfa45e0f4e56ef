package amqpserver

import "testing"

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, GCPercentMax},
		{10 << 20, GCPercentMax},
		{GCHeapBudget / 5, GCPercentMax}, // 400% exactly
		{GCHeapBudget / 4, 300},
		{GCHeapBudget / 2, 100},
		{GCHeapBudget, 100},
		{4 * GCHeapBudget, 100},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
