package ui

import (
	"fmt"

	"github.com/peeklock/peeklock/broker"
	"strconv"
	"time"
)

// Count formats a count compactly: 999, 1.2k, 12k, 1.0M.
func Count(n int64) string {
	switch {
	case n < 0:
		return "-" + Count(-n)
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	case n < 10_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n < 1_000_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	}
	return fmt.Sprintf("%.1fG", float64(n)/1e9)
}

// UnknownCount is shown for a count the endpoint does not know.
const UnknownCount = "?"

// CountOf formats the count of category c in n with Count; a count the
// endpoint does not know (broker.Counts.Unknown: every one but Locked) is
// UnknownCount.
func CountOf(n broker.Counts, c broker.Category) string {
	if n.Unknown && c != broker.CategoryLocked {
		return UnknownCount
	}
	return Count(n.Count(c))
}

// DepthOf formats Depth(n), or UnknownCount when the endpoint does not
// know the counts.
func DepthOf(n broker.Counts) string {
	if n.Unknown {
		return UnknownCount
	}
	return Count(Depth(n))
}

// Age formats how long ago t was, in at most 5 cells: 0s, 59s, 12m, 3h, 4d.
// A zero t is "-".
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + Short(-d)
	}
	return Short(d)
}

// Short formats a duration in a few cells: 0s, 12s, 4m, 3h, 2d, 5y.
func Short(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int64(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int64(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int64(d/time.Hour))
	case d < 2*365*24*time.Hour:
		return fmt.Sprintf("%dd", int64(d/(24*time.Hour)))
	}
	return fmt.Sprintf("%dy", int64(d/(365*24*time.Hour)))
}

// Remaining formats the time left on a lock: "12.3s" under a minute, else
// "1m05s".
func Remaining(d time.Duration) string {
	if d <= 0 {
		return "0.0s"
	}
	// Tenths only in the last ten seconds, where they matter: a countdown
	// that changes five times a second on every row costs bandwidth over SSH.
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	if d < time.Minute {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	m := int64(d / time.Minute)
	s := int64((d % time.Minute) / time.Second)
	return fmt.Sprintf("%dm%02ds", m, s)
}

// Bytes formats a size: 512B, 1.5K, 12K, 3.2M.
func Bytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 10*1024:
		return fmt.Sprintf("%.1fK", float64(n)/1024)
	case n < 1024*1024:
		return fmt.Sprintf("%dK", n/1024)
	case n < 10*1024*1024:
		return fmt.Sprintf("%.1fM", float64(n)/(1024*1024))
	}
	return fmt.Sprintf("%dM", n/(1024*1024))
}
