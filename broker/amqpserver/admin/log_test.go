package admin

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/internal/syncbuf"
)

// lockedBuffer is a log destination for tests.
type lockedBuffer = syncbuf.Buffer

// TestFailedRequestFloodLogIsBounded sends many unauthorized requests with
// long, hostile paths: the log keeps a few short lines and counts the rest.
func TestFailedRequestFloodLogIsBounded(t *testing.T) {
	eng, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var logBuf lockedBuffer
	srv := httptest.NewServer(NewHandler(eng, Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}))
	defer srv.Close()
	path := "/q%0Alevel=ERROR%1B" + strings.Repeat("x", 6000)
	const requests = 300
	for range requests {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	log := logBuf.String()
	t.Logf("%d failed requests: %d bytes of log", requests, len(log))
	if len(log) > 16<<10 {
		t.Fatalf("%d failed requests wrote %d bytes of log", requests, len(log))
	}
	for _, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		if len(line) > 1024 || strings.HasPrefix(line, "level=ERROR") || strings.Contains(line, "\x1b") {
			t.Fatalf("log line %.200q", line)
		}
	}
}
