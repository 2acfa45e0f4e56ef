package cli

import (
	"strings"
	"testing"
	"time"
)

// TestProgressDraws a bar with the count, the share and the rate, and
// erases it at the end; without a terminal there is none.
func TestProgressDraws(t *testing.T) {
	var b strings.Builder
	p := &progress{w: &b, what: "export q", total: 200, start: time.Now().Add(-time.Second)}
	p.add(50)
	if got := b.String(); !strings.Contains(got, "export q  [=======                       ] 50/200  25%") || !strings.Contains(got, "msg/s") {
		t.Fatalf("bar: %q", got)
	}
	p.finish()
	if !strings.HasSuffix(b.String(), "\r\x1b[K") {
		t.Fatalf("not erased: %q", b.String())
	}
	if newProgress(&b, "x", 1) != nil {
		t.Fatal("a progress bar on something that is not a terminal")
	}
	var none *progress
	none.add(1) // no bar: nothing to do, no panic
	none.finish()
}
