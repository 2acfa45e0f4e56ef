package amqpserver

import "testing"

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, GCPercentMax},
		{10 << 20, GCPercentMax},
		{GCHeadroom / 4, GCPercentMax}, // 400% exactly
		{GCHeadroom / 2, 200},
		{64 << 20, 200}, // a thousand connections: 128 MiB of garbage, not 256
		{GCHeadroom, 100},
		{4 * GCHeadroom, 100},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
