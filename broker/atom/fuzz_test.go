package atom

import (
	"errors"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// FuzzParseDuration: any text is a duration between zero and "never" or a
// *DurationError, never a panic; what FormatDuration writes of a duration
// reads back as the same duration.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"PT30S", "P1DT2H3M4.5S", MaxDuration, "P2W", "PT0.0000001S", "P106751DT23H47M17S",
		"P1Y2M3DT4H5M6,7S", "", "-PT1S", "PT", "PT1.2.3S", "P99999999999999999999D", "pt.5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			var de *DurationError
			if !errors.As(err, &de) || de.Text != s || d != 0 {
				t.Fatalf("ParseDuration(%q) = %v, %v; want a *DurationError", s, d, err)
			}
			return
		}
		if d < 0 || d > broker.MaxTimeToLive {
			t.Fatalf("ParseDuration(%q) = %v, outside [0, never]", s, d)
		}
		text := FormatDuration(d)
		back, err := ParseDuration(text)
		if err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, written %q, read back %v, %v", s, d, text, back, err)
		}
		if FormatDuration(back) != text {
			t.Fatalf("FormatDuration is not stable for %v", d)
		}
	})
}
