package sshserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/internal/syncbuf"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer = syncbuf.Buffer

// auditLog collects JSON log lines.
type auditLog struct{ buf syncBuffer }

func (a *auditLog) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(&a.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// lines returns the audit lines (message "audit") as maps.
func (a *auditLog) lines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(a.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad log line %q: %v", l, err)
		}
		if m["msg"] == "audit" {
			out = append(out, m)
		}
	}
	return out
}

// newEngine returns an in-memory engine with queue "orders" holding n
// messages with MessageIds m-1 … m-n; it closes with the test.
func newEngine(t testing.TB, n int) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: "orders", Kind: broker.KindQueue}); err != nil {
		t.Fatal(err)
	}
	sendN(t, e, "orders", 1, n)
	return e
}

// sendN sends messages m-from … m-to to entity.
func sendN(t testing.TB, e *engine.Engine, entity string, from, to int) {
	t.Helper()
	var msgs []*broker.Message
	for i := from; i <= to; i++ {
		msgs = append(msgs, &broker.Message{MessageID: "m-" + itoa(i), Body: []byte("body " + itoa(i))})
	}
	if len(msgs) == 0 {
		return
	}
	if err := e.Send(context.Background(), entity, msgs); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// counts returns the counts of entity.
func counts(t testing.TB, e *engine.Engine, entity string) broker.Counts {
	t.Helper()
	en, err := e.Entity(context.Background(), entity)
	if err != nil {
		t.Fatal(err)
	}
	return en.Counts
}

// waitUntil polls cond every 20 ms until it holds or total passes.
func waitUntil(t testing.TB, total time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(total)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", total, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
