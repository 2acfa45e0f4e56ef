package gctune

import "testing"

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, PercentMax},
		{10 << 20, PercentMax},
		{Headroom / 4, PercentMax}, // 400% exactly
		{Headroom / 2, 200},
		{64 << 20, 200}, // a thousand connections: 128 MiB of garbage, not 256
		{Headroom, 100},
		{4 * Headroom, 100},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
