package remote

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/internal/brokertest"
)

// testJWT is the token of the fake Entra ID credential.
const testJWT = "eyJ0eXAiOiJKV1QifQ.test.token"

// debugLogger is the clients' logger in tests; nil discards.
var debugLogger *slog.Logger

// serveEnv is peeklock serve inside the test: an engine, the AMQP listener
// on 127.0.0.1:0 behind a proxy the test can cut, and the admin API.
type serveEnv struct {
	t        testing.TB
	eng      *engine.Engine
	srv      *amqpserver.Server
	addr     string // the listener
	proxy    *proxy // what clients dial
	adminURL string
	puts     *countingAuthorizer
}

// countingAuthorizer validates SAS tokens and counts put-tokens by
// audience.
type countingAuthorizer struct {
	v    *sas.Validator
	mu   sync.Mutex
	seen map[string]int
	all  atomic.Int64
}

func (a *countingAuthorizer) Validate(tokenType, token string) (amqpserver.Grant, error) {
	a.all.Add(1)
	if tokenType == amqpserver.TokenTypeJWT {
		// Stands in for Microsoft Entra ID: one known token grants the
		// whole namespace.
		if token != testJWT {
			return amqpserver.Grant{}, broker.Errorf(broker.CodeUnauthorized, "unknown JWT")
		}
		a.mu.Lock()
		a.seen["jwt"]++
		a.mu.Unlock()
		return amqpserver.Grant{Audience: "sb://127.0.0.1/", Expires: time.Now().Add(time.Hour), Rights: sas.AllRights}, nil
	}
	t, err := a.v.Validate(token)
	if err != nil {
		return amqpserver.Grant{}, err
	}
	a.mu.Lock()
	a.seen[t.Audience]++
	a.mu.Unlock()
	return amqpserver.Grant{Audience: t.Audience, Expires: t.Expiry, Rights: t.Rights}, nil
}

func (a *countingAuthorizer) count(audience string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[audience]
}

// newServe starts an engine on clock (nil: the real clock) and the
// listeners.
func newServe(t testing.TB, clock clockwork.Clock) *serveEnv {
	t.Helper()
	// Benchmarks hold 1,000 locks on one link; the listener's default
	// allows 256 unsettled deliveries per link.
	opts := amqpserver.Options{MaxUnsettledPerLink: 4096}
	if clock == nil {
		clock = clockwork.NewRealClock()
	} else {
		// The listener's idle watchdog runs on the clock too: a test that
		// moves a fake clock would trip it.
		opts.IdleTimeout = -1
	}
	auth := &countingAuthorizer{v: sas.NewValidator(sas.DefaultKeys(), clock), seen: map[string]int{}}
	opts.Authorizer = auth
	b := brokertest.Start(t, brokertest.Options{
		EngineOptions: engine.Options{Clock: clock},
		Listener: func(eng *engine.Engine) (brokertest.Listener, error) {
			return amqpserver.New(eng, opts)
		},
		Admin: &admin.Options{Host: "127.0.0.1", Clock: clock},
	})
	env := &serveEnv{t: t, eng: b.Engine, srv: b.Listener.(*amqpserver.Server), addr: b.Addr, adminURL: b.AdminURL, puts: auth}
	env.proxy = newProxy(t, env.addr)
	t.Cleanup(env.proxy.close)
	return env
}

// queue creates a queue.
func (e *serveEnv) queue(name string, s broker.EntitySettings) {
	e.t.Helper()
	if err := e.eng.CreateEntity(context.Background(), broker.Entity{Path: name, Kind: broker.KindQueue, Settings: s}); err != nil {
		e.t.Fatal(err)
	}
}

// connString is the emulator connection string of the proxy.
func (e *serveEnv) connString(extra string) string {
	return fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true%s",
		e.proxy.addr(), sas.DefaultKeyName, sas.DefaultKey, extra)
}

// config returns a client configuration for the environment.
func (e *serveEnv) config(extra string) Config {
	e.t.Helper()
	cs, err := ParseConnectionString(e.connString(extra))
	if err != nil {
		e.t.Fatal(err)
	}
	return Config{Conn: cs, AdminURL: e.adminURL, Timeout: 10 * time.Second, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Logger: debugLogger}
}

// dial connects a client, closed at cleanup.
func (e *serveEnv) dial(cfg Config) *Client {
	e.t.Helper()
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		e.t.Fatalf("Dial: %v", err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// proxy forwards TCP connections to a target and can cut them all.
type proxy struct {
	t      testing.TB
	l      net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	down   bool // refuse (close at once) new connections
	wg     sync.WaitGroup
}

func newProxy(t testing.TB, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, l: l, target: target}
	p.wg.Add(1)
	go p.accept()
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
		go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
	}
}

// cut closes every proxied connection; with down, new ones are refused
// until up is called.
func (p *proxy) cut(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *proxy) up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *proxy) close() {
	_ = p.l.Close()
	p.cut(true)
	p.wg.Wait()
}

// waitFor polls cond every 5 ms until it holds or total passes.
func waitFor(t *testing.T, total time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(total)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", total, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// seqs returns the sequence numbers of msgs.
func seqs(msgs []*broker.Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.SequenceNumber
	}
	return out
}

// textMessages builds n data messages "m1".."mn" with MessageIds id1..idn.
func textMessages(n int) []*broker.Message {
	out := make([]*broker.Message, n)
	for i := range out {
		out[i] = &broker.Message{MessageID: fmt.Sprintf("id%d", i+1), Body: []byte(fmt.Sprintf("m%d", i+1)), ContentType: "text/plain"}
	}
	return out
}
