package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws a progress bar of long work on a terminal (stderr), at
// most ten times a second, and erases it at the end. On anything else it
// draws nothing.
type progress struct {
	w     io.Writer
	what  string
	total int64
	start time.Time

	mu   sync.Mutex
	done int64
	last time.Time
}

// newProgress returns a progress of the work what, of total items (0:
// unknown), drawn on w when w is a terminal; nil otherwise.
func newProgress(w io.Writer, what string, total int64) *progress {
	if !isTerminal(w) {
		return nil
	}
	return &progress{w: w, what: what, total: total, start: time.Now()}
}

// add counts n more items done.
func (p *progress) add(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += int64(n)
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond {
		p.last = now
		p.draw(now)
	}
}

func (p *progress) draw(now time.Time) {
	rate := float64(p.done) / max(now.Sub(p.start).Seconds(), 0.001)
	line := fmt.Sprintf("%s  %d", p.what, p.done)
	if p.total > 0 {
		const width = 30
		frac := min(float64(p.done)/float64(p.total), 1)
		fill := int(frac * width)
		line = fmt.Sprintf("%s  [%s%s] %d/%d %3.0f%%", p.what, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), p.done, p.total, frac*100)
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s  %.0f msg/s", line, rate)
}

// finish erases the bar.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r\x1b[K")
}
