package atom

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestParseDuration reads durations as Service Bus, the SDKs and the
// emulator's Config.json write them: every unit, fractions, weeks, any
// case, and .NET's TimeSpan.MaxValue (and anything else too long for a
// time.Duration) as "never".
func TestParseDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"PT30S":                        30 * time.Second,
		"P1D":                          24 * time.Hour,
		"P14D":                         14 * 24 * time.Hour,
		"PT1H30M":                      90 * time.Minute,
		"PT0.5S":                       500 * time.Millisecond,
		"PT1.25S":                      1250 * time.Millisecond,
		"PT0,5S":                       500 * time.Millisecond,
		"PT.5S":                        500 * time.Millisecond,
		"PT0.0000001S":                 100 * time.Nanosecond, // a .NET tick
		"PT1.123456789S":               1123456789 * time.Nanosecond,
		"PT1.1234567891S":              1123456789 * time.Nanosecond, // beyond nanoseconds: cut
		"PT1.5M":                       90 * time.Second,
		"PT0.5H":                       30 * time.Minute,
		"P0.5D":                        12 * time.Hour,
		"P1DT2H3M4S":                   26*time.Hour + 3*time.Minute + 4*time.Second,
		"P1DT2H3M4.5S":                 26*time.Hour + 3*time.Minute + 4500*time.Millisecond,
		"P2W":                          14 * 24 * time.Hour,
		"P1W1D":                        8 * 24 * time.Hour,
		"P1Y":                          365 * 24 * time.Hour,
		"P1M":                          30 * 24 * time.Hour,
		"P1Y2M3DT4H":                   (365+60+3)*24*time.Hour + 4*time.Hour,
		"PT1M":                         time.Minute,
		"PT0S":                         0,
		"P0D":                          0,
		"pt5s":                         5 * time.Second,
		MaxDuration:                    broker.MaxTimeToLive,
		"P106751DT23H47M17S":           broker.MaxTimeToLive, // just past the int64 nanosecond range
		"P106751DT23H47M16.854775807S": broker.MaxTimeToLive, // exactly the int64 range
		"P106751D":                     106751 * 24 * time.Hour,
		"P99999999999999999999D":       broker.MaxTimeToLive, // more digits than a uint64
		"P300000Y":                     broker.MaxTimeToLive,
		"PT9223372036.854775808S":      broker.MaxTimeToLive, // one nanosecond too many
	} {
		got, err := ParseDuration(s)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

// TestParseDurationMalformed: everything else is a *DurationError that
// says what is wrong, never a panic or a zero taken as valid.
func TestParseDurationMalformed(t *testing.T) {
	for s, reason := range map[string]string{
		"":          "it is empty",
		"-PT1S":     "negative durations are not allowed",
		"30S":       "it must start with P",
		"1 minute":  "it must start with P",
		"P":         "it has no number",
		"PT":        "nothing follows T",
		"P1DT":      "nothing follows T",
		"PT1HT1M":   "T appears twice",
		"PTS":       "a number must be followed by a unit",
		"PT30":      "a number must be followed by a unit",
		"P1D T1H":   "a number must be followed by a unit",
		"PTXS":      "a number must be followed by a unit",
		"PT1H1H":    "units are out of order or repeated",
		"PT1S1M":    "units are out of order or repeated",
		"P1D1Y":     "units are out of order or repeated",
		"P1H":       `unexpected unit 'H' before T`,
		"PT1D":      `unexpected unit 'D' after T`,
		"PT1W":      `unexpected unit 'W' after T`,
		"P1X":       `unexpected unit 'X' before T`,
		"PT1.5M30S": "only the last number may have a fraction",
		"PT1.2.3S":  `malformed number "1.2.3"`,
		"PT1,2.3S":  `malformed number "1,2.3"`,
		"PT.S":      `malformed number "."`,
	} {
		d, err := ParseDuration(s)
		var de *DurationError
		if !errors.As(err, &de) || de.Text != s || de.Reason != reason {
			t.Errorf("ParseDuration(%q) = %v, %v; want a *DurationError: %s", s, d, err, reason)
			continue
		}
		want := strconv.Quote(s) + ` is not an ISO 8601 duration such as PT30S, PT1H30M or P1D: ` + reason
		if err.Error() != want {
			t.Errorf("ParseDuration(%q): %q, want %q", s, err, want)
		}
	}
}

// TestFormatDuration writes days, hours, minutes and seconds as Service Bus
// does, "never" as .NET's TimeSpan.MaxValue, and reads back what it wrote.
func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute:                          "PT1M",
		90 * time.Minute:                     "PT1H30M",
		26 * time.Hour:                       "P1DT2H",
		500 * time.Millisecond:               "PT0.5S",
		100 * time.Nanosecond:                "PT0.0000001S",
		time.Nanosecond:                      "PT0.000000001S",
		14 * 24 * time.Hour:                  "P14D",
		24*time.Hour + time.Second:           "P1DT1S",
		26*time.Hour + 4500*time.Millisecond: "P1DT2H4.5S",
		broker.MaxTimeToLive:                 MaxDuration,
		broker.MaxTimeToLive - 1:             "P106751DT23H47M16.854775806S",
		0:                                    "PT0S",
		-time.Second:                         "PT0S",
		24 * time.Hour:                       "P1D",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		back, err := ParseDuration(want)
		if d < 0 {
			d = 0
		}
		if err != nil || back != d {
			t.Errorf("round trip of %v: %v, %v", d, back, err)
		}
	}
}
