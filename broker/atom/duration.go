package atom

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// Calendar units of ISO 8601 durations, counted as .NET's XmlConvert counts
// them: a year is 365 days and a month 30.
const (
	day   = 24 * time.Hour
	week  = 7 * day
	month = 30 * day
	year  = 365 * day
)

// MaxDuration is how Service Bus writes .NET's TimeSpan.MaxValue, the
// "never" of message lifetimes and idle times. FormatDuration writes
// broker.MaxTimeToLive so, and ParseDuration reads it back as
// broker.MaxTimeToLive.
const MaxDuration = "P10675199DT2H48M5.4775807S"

// DurationError is text that is not an ISO 8601 duration.
type DurationError struct {
	// Text is the text as given.
	Text string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns `"text" is not an ISO 8601 duration such as ...: reason`.
func (e *DurationError) Error() string {
	return fmt.Sprintf("%q is not an ISO 8601 duration such as PT30S, PT1H30M or P1D: %s", e.Text, e.Reason)
}

// ParseDuration reads an ISO 8601 duration as Service Bus writes them:
// P[nY][nM][nW][nD][T[nH][nM][n[.f]S]], e.g. PT30S, P1D, PT1H30M, PT0.5S,
// letters in either case, the last number with an optional fraction ('.'
// or ','). A duration too long for a time.Duration (such as .NET's
// TimeSpan.MaxValue, MaxDuration) is broker.MaxTimeToLive, the "never" of
// message lifetimes. Anything else, negative durations included, is a
// *DurationError.
func ParseDuration(s string) (time.Duration, error) {
	bad := func(why string) (time.Duration, error) {
		return 0, &DurationError{Text: s, Reason: why}
	}
	switch {
	case s == "":
		return bad("it is empty")
	case s[0] == '-':
		return bad("negative durations are not allowed")
	case s[0] != 'P' && s[0] != 'p':
		return bad("it must start with P")
	}
	var total time.Duration
	overflow, inTime := false, false
	last := 0 // rank of the last unit, to enforce their order
	for rest := s[1:]; rest != ""; {
		if rest[0] == 'T' || rest[0] == 't' {
			if inTime {
				return bad("T appears twice")
			}
			inTime, rest = true, rest[1:]
			if rest == "" {
				return bad("nothing follows T")
			}
			continue
		}
		num, letter, tail, ok := cutComponent(rest)
		if !ok {
			return bad("a number must be followed by a unit")
		}
		rest = tail
		unit, rank := unitOf(letter, inTime)
		switch {
		case rank == 0 && inTime:
			return bad(fmt.Sprintf("unexpected unit %q after T", letter))
		case rank == 0:
			return bad(fmt.Sprintf("unexpected unit %q before T", letter))
		case rank <= last:
			return bad("units are out of order or repeated")
		}
		last = rank
		whole, frac, ok := splitNumber(num)
		switch {
		case !ok:
			return bad("malformed number " + strconv.Quote(num))
		case frac != "" && rest != "":
			return bad("only the last number may have a fraction")
		}
		part, fits := component(whole, frac, unit)
		if !fits || total > math.MaxInt64-part {
			overflow = true
		} else {
			total += part
		}
	}
	if last == 0 {
		return bad("it has no number")
	}
	if overflow {
		return broker.MaxTimeToLive, nil
	}
	return total, nil
}

// cutComponent splits "12.5S..." into the number, its unit letter and the
// rest; ok is false when there is no number or no letter after it.
func cutComponent(s string) (num string, letter byte, rest string, ok bool) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == ',') {
		i++
	}
	if i == 0 || i == len(s) {
		return "", 0, "", false
	}
	return s[:i], s[i], s[i+1:], true
}

// unitOf returns the length and the rank (their order in a duration, from
// 1) of a unit letter before or after T; rank 0 for none.
func unitOf(letter byte, inTime bool) (time.Duration, int) {
	switch l := letter | 0x20; { // lower case
	case !inTime && l == 'y':
		return year, 1
	case !inTime && l == 'm':
		return month, 2
	case !inTime && l == 'w':
		return week, 3
	case !inTime && l == 'd':
		return day, 4
	case inTime && l == 'h':
		return time.Hour, 5
	case inTime && l == 'm':
		return time.Minute, 6
	case inTime && l == 's':
		return time.Second, 7
	}
	return 0, 0
}

// splitNumber splits "12.5" (or "12,5") into its digits before and after
// the separator; ok is false for more than one separator or no digit.
func splitNumber(num string) (whole, frac string, ok bool) {
	num = strings.ReplaceAll(num, ",", ".")
	whole, frac, _ = strings.Cut(num, ".")
	return whole, frac, !strings.Contains(frac, ".") && (whole != "" || frac != "")
}

// component returns whole.frac units, exactly to the nanosecond for
// seconds; fits is false when it exceeds a time.Duration.
func component(whole, frac string, unit time.Duration) (d time.Duration, fits bool) {
	var w uint64
	if whole != "" {
		var err error
		if w, err = strconv.ParseUint(whole, 10, 64); err != nil {
			return 0, false // only digits: too many of them
		}
	}
	if w > uint64(math.MaxInt64/int64(unit)) {
		return 0, false
	}
	d = time.Duration(w) * unit
	if frac == "" {
		return d, true
	}
	var f time.Duration
	if unit == time.Second {
		digits := (frac + "000000000")[:9] // nanoseconds: what lies beyond is cut
		n, _ := strconv.ParseInt(digits, 10, 64)
		f = time.Duration(n)
	} else {
		x, _ := strconv.ParseFloat("0."+frac, 64) // only digits: cannot fail
		f = time.Duration(math.Round(x * float64(unit)))
	}
	if d > math.MaxInt64-f {
		return 0, false
	}
	return d + f, true
}

// FormatDuration writes d as an ISO 8601 duration in days, hours, minutes
// and seconds (PT1M, P1DT2H, PT0.5S), as Service Bus does;
// broker.MaxTimeToLive (or more) is MaxDuration, and zero or less PT0S.
func FormatDuration(d time.Duration) string {
	if d >= broker.MaxTimeToLive {
		return MaxDuration
	}
	if d <= 0 {
		return "PT0S"
	}
	b := []byte{'P'}
	if days := d / day; days > 0 {
		b = append(strconv.AppendInt(b, int64(days), 10), 'D')
		d -= days * day
	}
	if d == 0 {
		return string(b)
	}
	b = append(b, 'T')
	if h := d / time.Hour; h > 0 {
		b = append(strconv.AppendInt(b, int64(h), 10), 'H')
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		b = append(strconv.AppendInt(b, int64(m), 10), 'M')
		d -= m * time.Minute
	}
	if d > 0 {
		sec, ns := d/time.Second, d%time.Second
		b = strconv.AppendInt(b, int64(sec), 10)
		if ns > 0 {
			b = append(b, '.')
			b = append(b, strings.TrimRight(fmt.Sprintf("%09d", int64(ns)), "0")...)
		}
		b = append(b, 'S')
	}
	return string(b)
}
