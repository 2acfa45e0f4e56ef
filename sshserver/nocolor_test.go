package sshserver

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sgrRE matches a Select Graphic Rendition sequence and captures its
// parameters.
var sgrRE = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// firstColour returns the first SGR sequence in out that sets a foreground
// or background colour (16, 256 or true colours), or "".
func firstColour(out string) string {
	for _, m := range sgrRE.FindAllStringSubmatch(out, -1) {
		for p := range strings.SplitSeq(m[1], ";") {
			n, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0])
			if err != nil {
				continue
			}
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				return m[0]
			}
		}
	}
	return ""
}

// NO_COLOR is the SSH client's: a session whose client sends NO_COLOR=1
// shows no colour, and one whose client does not shows colours even when
// the server's own process has NO_COLOR set.
func TestNoColorFromTheSSHClient(t *testing.T) {
	t.Setenv("NO_COLOR", "1") // the server's process: must not count
	ts := startServer(t, newEngine(t, 2), nil)

	plain := openTermEnv(t, ts.mustDial(ts.operator), 100, 30, "NO_COLOR=1")
	plain.waitScreen(10*time.Second, "orders")

	coloured := openTermEnv(t, ts.mustDial(ts.operator), 100, 30)
	coloured.waitScreen(10*time.Second, "orders")
	waitUntil(t, 5*time.Second, "colours in the session without NO_COLOR", func() bool {
		return firstColour(coloured.raw.String()) != ""
	})
	if c := firstColour(plain.raw.String()); c != "" {
		t.Errorf("colour %q in the session whose client sent NO_COLOR=1", c)
	}
}
