package amqpserver

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/internal/syncbuf"
)

// lockedBuffer is a log destination for tests.
type lockedBuffer = syncbuf.Buffer

// saslPlain runs SASL PLAIN with the default key and the open exchange: a
// connection that has authenticated.
func (c *rawClient) saslPlain() {
	c.t.Helper()
	if h := c.header(wire.HeaderSASL); h != wire.HeaderSASL {
		c.t.Fatalf("header %+v", h)
	}
	c.read()
	b, _ := wire.AppendFrame(nil, wire.FrameSASL, 0, &wire.SASLInit{Mechanism: wire.MechanismPlain, InitialResponse: []byte("\x00" + DefaultKeyName + "\x00" + DefaultKey)})
	c.write(b)
	if out, ok := c.read().Body.(*wire.SASLOutcome); !ok || out.Code != wire.SASLOK {
		c.t.Fatalf("outcome %+v", out)
	}
	c.open(&wire.Open{ContainerID: "raw"})
}

// TestRefusalFloodLogIsBounded attaches thousands of links with long,
// hostile names to an entity that does not exist, detaching each refusal
// at once, as one connection of an outside test did to write 26 MB of log
// in 4 s: the log stays small, its lines short and free of the control
// characters sent, and the refusals held back are counted.
func TestRefusalFloodLogIsBounded(t *testing.T) {
	var logBuf lockedBuffer
	env := newEnv(t, engineOpts(), Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	c := env.raw()
	c.saslPlain()
	c.begin(0)
	const refusals = 3000
	evil := "\x1b]52;c;aGVsbG8=\x07\nlevel=ERROR msg=forged " + strings.Repeat("x", 4000)
	var flood []byte
	for range refusals {
		flood, _ = wire.AppendFrame(flood, wire.FrameAMQP, 0, &wire.Attach{Name: evil, Handle: 0, Role: wire.RoleSender,
			Source: &wire.Source{Address: "me"}, Target: &wire.Target{Address: "nope/" + evil}})
		flood, _ = wire.AppendFrame(flood, wire.FrameAMQP, 0, &wire.Detach{Handle: 0, Closed: true})
	}
	flood, _ = wire.AppendFrame(flood, wire.FrameAMQP, 0, &wire.Attach{Name: "last", Handle: 1, Role: wire.RoleSender,
		Source: &wire.Source{Address: "me"}, Target: &wire.Target{Address: "nope"}})
	go func() { _, _ = c.nc.Write(flood) }()
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		fr, err := c.r.ReadFrame()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if a, ok := fr.Body.(*wire.Attach); ok && a.Name == "last" {
			break
		}
	}
	_ = c.nc.Close()
	waitFor(t, 10*time.Second, "the connection to end", func() bool { return env.srv.Connections() == 0 })
	log := logBuf.String()
	t.Logf("%d refusals: %d bytes of log", refusals, len(log))
	if len(log) > 16<<10 {
		t.Fatalf("%d refusals wrote %d bytes of log", refusals, len(log))
	}
	for _, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		if len(line) > 1024 {
			t.Fatalf("a log line of %d bytes: %.200s", len(line), line)
		}
		if strings.HasPrefix(line, "level=ERROR") || strings.ContainsAny(line, "\x1b\x07") {
			t.Fatalf("the peer's text reached the log raw: %q", line)
		}
	}
	if !strings.Contains(log, "suppressed") {
		t.Fatalf("the refusals held back are not counted:\n%s", log)
	}
}
