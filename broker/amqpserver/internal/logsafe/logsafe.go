// Package logsafe keeps what peers send from turning the listener's log
// into a weapon: Clip shortens and escapes a client-supplied string for one
// log line, and a Limiter turns a flood of similar lines into a count.
package logsafe

import (
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the most bytes of a client-supplied string a log line carries
// (an entity path is at most 260 characters; more is noise or an attack).
const MaxLen = 160

// Clip returns s fit for a log line: control characters, invalid UTF-8 and
// characters that are not graphic (bidirectional overrides among them) are
// escaped Go-style ("\x1b", "\u202e"), and what passes MaxLen bytes (once
// escaped) is cut and replaced by a note of how many bytes were left out.
func Clip(s string) string {
	if len(s) <= MaxLen && plain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size <= 1:
			piece = `\x` + string("0123456789abcdef"[s[i]>>4]) + string("0123456789abcdef"[s[i]&15])
		case r == '\\':
			piece = `\\`
		case unicode.IsGraphic(r) && !unicode.Is(unicode.Bidi_Control, r):
			piece = s[i : i+size]
		default:
			q := strconv.QuoteRuneToASCII(r)
			piece = q[1 : len(q)-1]
		}
		if b.Len()+len(piece) > MaxLen {
			b.WriteString("…(")
			b.WriteString(strconv.Itoa(len(s) - i))
			b.WriteString(" more bytes)")
			break
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// plain reports whether s is printable ASCII without backslashes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// Err is Clip of an error's text ("" for nil): errors carry addresses and
// names the peer chose.
func Err(err error) string {
	if err == nil {
		return ""
	}
	return Clip(err.Error())
}

// Limiter lets through a burst of log lines and then one per interval,
// counting the ones it holds back, so that a peer repeating what gets
// logged writes a bounded log. The zero value is not usable; see
// NewLimiter. Its methods are safe for concurrent use.
type Limiter struct {
	burst    int
	interval time.Duration

	mu         sync.Mutex
	tokens     int
	refilled   time.Time
	suppressed int64
}

// NewLimiter returns a Limiter that lets burst lines through at once and
// then one more per interval.
func NewLimiter(burst int, interval time.Duration) *Limiter {
	return &Limiter{burst: burst, interval: interval, tokens: burst}
}

// Allow reports whether a line may be logged at now; when it may, it also
// returns how many lines were held back since the last one let through
// (the caller logs that count with the line).
func (l *Limiter) Allow(now time.Time) (bool, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refilled.IsZero() {
		l.refilled = now
	}
	if n := int(now.Sub(l.refilled) / l.interval); n > 0 {
		l.tokens = min(l.burst, l.tokens+n)
		l.refilled = l.refilled.Add(time.Duration(n) * l.interval)
	}
	if l.tokens == 0 {
		l.suppressed++
		return false, 0
	}
	l.tokens--
	held := l.suppressed
	l.suppressed = 0
	return true, held
}

// Suppressed returns the lines held back since the last one let through,
// and forgets them: a connection logs them when it ends.
func (l *Limiter) Suppressed() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.suppressed
	l.suppressed = 0
	return n
}
