package engine

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

// ParseDuration parses an ISO 8601 duration as Service Bus writes them:
// P[nY][nM][nW][nD][T[nH][nM][n[.f]S]], e.g. PT30S, P1D, PT1H30M,
// PT0.5S. A value too long for a time.Duration (such as .NET's
// TimeSpan.MaxValue, P10675199DT2H48M5.4775807S) is broker.MaxTimeToLive, the
// "never" of message lifetimes. Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("%q is not an ISO 8601 duration such as PT30S, PT1H30M or P1D: %s", s, why)
	}
	if s == "" {
		return bad("it is empty")
	}
	if s[0] == '-' {
		return bad("negative durations are not allowed")
	}
	if s[0] != 'P' && s[0] != 'p' {
		return bad("it must start with P")
	}
	rest := s[1:]
	var total float64 // nanoseconds; float so that overflow saturates instead of wrapping
	var exact int64   // the same in integers while it fits, for precision
	overflow := false
	inTime := false
	units := 0
	last := 0 // rank of the last unit, to enforce their order
	for rest != "" {
		if rest[0] == 'T' || rest[0] == 't' {
			if inTime {
				return bad("T appears twice")
			}
			inTime = true
			rest = rest[1:]
			if rest == "" {
				return bad("nothing follows T")
			}
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.' || rest[i] == ',') {
			i++
		}
		if i == 0 || i == len(rest) {
			return bad("a number must be followed by a unit")
		}
		num := strings.Replace(rest[:i], ",", ".", 1)
		orig := rest[i]
		unitChar := orig | 0x20 // lower case
		rest = rest[i+1:]
		var unit time.Duration
		var rank int
		switch {
		case !inTime && unitChar == 'y':
			unit, rank = year, 1
		case !inTime && unitChar == 'm':
			unit, rank = month, 2
		case !inTime && unitChar == 'w':
			unit, rank = week, 3
		case !inTime && unitChar == 'd':
			unit, rank = day, 4
		case inTime && unitChar == 'h':
			unit, rank = time.Hour, 5
		case inTime && unitChar == 'm':
			unit, rank = time.Minute, 6
		case inTime && unitChar == 's':
			unit, rank = time.Second, 7
		default:
			where := "before T"
			if inTime {
				where = "after T"
			}
			return bad(fmt.Sprintf("unexpected unit %q %s", orig, where))
		}
		if rank <= last {
			return bad("units are out of order or repeated")
		}
		last = rank
		units++
		whole, frac, hasFrac := strings.Cut(num, ".")
		if whole == "" && (!hasFrac || frac == "") || strings.Contains(frac, ".") {
			return bad("malformed number " + strconv.Quote(num))
		}
		if hasFrac && rest != "" {
			return bad("only the last number may have a fraction")
		}
		w, err := strconv.ParseUint(orZero(whole), 10, 64)
		if err != nil {
			overflow = true
			w = math.MaxUint64
		}
		part := float64(w) * float64(unit)
		total += part
		if !overflow {
			if w > uint64(math.MaxInt64/int64(unit)) {
				overflow = true
			} else if v := int64(w) * int64(unit); exact > math.MaxInt64-v {
				overflow = true
			} else {
				exact += v
			}
		}
		if hasFrac && frac != "" {
			f, err := strconv.ParseFloat("0."+frac, 64)
			if err != nil {
				return bad("malformed fraction " + strconv.Quote(frac))
			}
			// Nanosecond precision: at most 9 digits of seconds matter.
			fns := int64(math.Round(f * float64(unit)))
			if unit == time.Second && len(frac) > 0 {
				digits := frac
				if len(digits) > 9 {
					digits = digits[:9]
				}
				n, _ := strconv.ParseInt(digits+strings.Repeat("0", 9-len(digits)), 10, 64)
				fns = n
			}
			total += float64(fns)
			if !overflow {
				if exact > math.MaxInt64-fns {
					overflow = true
				} else {
					exact += fns
				}
			}
		}
	}
	if units == 0 {
		return bad("it has no number")
	}
	if overflow || total >= float64(math.MaxInt64) {
		return broker.MaxTimeToLive, nil
	}
	return time.Duration(exact), nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// FormatDuration writes d as an ISO 8601 duration (PT1M, P1DT2H, PT0.5S);
// broker.MaxTimeToLive is written as .NET's TimeSpan.MaxValue,
// P10675199DT2H48M5.4775807S, as Service Bus does.
func FormatDuration(d time.Duration) string {
	if d >= broker.MaxTimeToLive {
		return "P10675199DT2H48M5.4775807S"
	}
	if d <= 0 {
		return "PT0S"
	}
	var b strings.Builder
	b.WriteByte('P')
	if days := d / day; days > 0 {
		b.WriteString(strconv.FormatInt(int64(days), 10) + "D")
		d -= days * day
	}
	if d == 0 {
		return b.String()
	}
	b.WriteByte('T')
	if h := d / time.Hour; h > 0 {
		b.WriteString(strconv.FormatInt(int64(h), 10) + "H")
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		b.WriteString(strconv.FormatInt(int64(m), 10) + "M")
		d -= m * time.Minute
	}
	if d > 0 {
		sec := d / time.Second
		ns := d - sec*time.Second
		s := strconv.FormatInt(int64(sec), 10)
		if ns > 0 {
			s += "." + strings.TrimRight(fmt.Sprintf("%09d", int64(ns)), "0")
		}
		b.WriteString(s + "S")
	}
	return b.String()
}
