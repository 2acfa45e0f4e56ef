package ui

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/themes"
)

// Flash kinds of a lock that just ended.
const (
	FlashExpired = "expired"
	FlashLost    = "lost"
)

// FlashOn reports whether a flashing row is in its bright phase at now: the
// phase changes every 400 ms.
func FlashOn(now time.Time) bool { return (now.UnixMilli()/400)%2 == 0 }

// CountdownStyle returns the style of a lock with left of total remaining:
// the success colour above half, the warning colour above a fifth, the
// danger colour below. A total that is not known (0) is the default lock
// duration.
func CountdownStyle(st *themes.Styles, left, total time.Duration) lipgloss.Style {
	if total <= 0 {
		total = broker.DefaultLockDuration
	}
	switch f := float64(left) / float64(total); {
	case f > 0.5:
		return st.CountdownOK
	case f > 0.2:
		return st.CountdownWarn
	}
	return st.CountdownLow
}

// Countdown renders the countdown bar of a lock held until until, which
// lasts total, at now, in exactly w cells: a bar that empties as the lock
// runs out and the time left. flash ("", FlashExpired or FlashLost) renders a
// lock that has just ended, flashing.
func Countdown(st *themes.Styles, now, until time.Time, total time.Duration, flash string, w int) string {
	if w <= 0 {
		return ""
	}
	left := until.Sub(now)
	if flash == "" && left <= 0 {
		flash = FlashExpired
	}
	if flash != "" {
		label := strings.ToUpper(flash)
		s := st.Error
		if FlashOn(now) {
			s = st.Flash
		}
		return s.Render(fit(" "+label+" ", w))
	}
	label := fitLeft(Remaining(left), 5)
	barW := w - len(label) - 1
	if barW < 3 {
		return CountdownStyle(st, left, total).Render(fitLeft(strings.TrimSpace(label), w))
	}
	if total <= 0 {
		total = broker.DefaultLockDuration
	}
	frac := float64(left) / float64(total)
	frac = min(max(frac, 0), 1)
	full := int(frac*float64(barW) + 0.5)
	if full == 0 {
		full = 1 // never show an empty bar for a live lock
	}
	style := CountdownStyle(st, left, total)
	return style.Render(strings.Repeat("█", full)) +
		st.CountdownTrack.Render(strings.Repeat("░", barW-full)) + " " + style.Render(label)
}
