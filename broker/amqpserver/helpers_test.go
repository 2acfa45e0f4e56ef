package amqpserver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/internal/brokertest"
)

// testEnv is an engine behind a listener on 127.0.0.1:0.
type testEnv struct {
	t    *testing.T
	eng  *engine.Engine
	srv  *Server
	addr string
}

// newEnv starts an engine and a listener (internal/brokertest); opts may
// adjust both. At the end of the test Serve must have returned
// ErrServerClosed and no connection may have recovered a panic.
func newEnv(t *testing.T, eopts engine.Options, opts Options) *testEnv {
	t.Helper()
	if opts.Logger == nil && os.Getenv("AMQPSERVER_LOG") != "" {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var srv *Server
	t.Cleanup(func() { // runs after the broker has stopped
		if srv == nil {
			return
		}
		if n := srv.panics.Load(); n != 0 {
			t.Errorf("%d panics recovered in connections", n)
		}
	})
	b := brokertest.Start(t, brokertest.Options{
		EngineOptions: eopts,
		Listener: func(eng *engine.Engine) (brokertest.Listener, error) {
			s, err := New(eng, opts)
			srv = s
			return s, err
		},
		Served: func(err error) {
			if err != nil {
				t.Errorf("the port stopped serving: %v", err)
			}
		},
	})
	return &testEnv{t: t, eng: b.Engine, srv: srv, addr: b.Addr}
}

// queue creates a queue.
func (e *testEnv) queue(name string, s broker.EntitySettings) {
	e.t.Helper()
	if err := e.eng.CreateEntity(context.Background(), broker.Entity{Path: name, Kind: broker.KindQueue, Settings: s}); err != nil {
		e.t.Fatal(err)
	}
}

// create creates entities.
func (e *testEnv) create(ents ...broker.Entity) {
	e.t.Helper()
	for _, en := range ents {
		if err := e.eng.CreateEntity(context.Background(), en); err != nil {
			e.t.Fatal(err)
		}
	}
}

// redTopic is topic "t" with subscription "all" (every message) and "red"
// (a correlation filter on Subject "red").
func redTopic() []broker.Entity {
	return []broker.Entity{
		{Path: "t", Kind: broker.KindTopic},
		{Path: "t/Subscriptions/all", Kind: broker.KindSubscription},
		{Path: "t/Subscriptions/red", Kind: broker.KindSubscription, Rules: []broker.Rule{{Name: "red", Filter: &broker.CorrelationFilter{Subject: "red"}}}},
	}
}

// connString returns an emulator connection string for the listener.
func (e *testEnv) connString(keyName, key string) string {
	return fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true", e.addr, keyName, key)
}

// client returns an SDK client with the default key, closed at cleanup.
func (e *testEnv) client() *azservicebus.Client {
	e.t.Helper()
	return e.clientWith(DefaultKeyName, DefaultKey)
}

func (e *testEnv) clientWith(keyName, key string) *azservicebus.Client {
	e.t.Helper()
	c, err := azservicebus.NewClientFromConnectionString(e.connString(keyName, key), &azservicebus.ClientOptions{
		RetryOptions: azservicebus.RetryOptions{MaxRetries: 1, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// sendThenReceive sends n messages with body to queue through c and
// receives one of them with a peek-lock receiver, which it returns with
// the message.
func sendThenReceive(t *testing.T, ctx context.Context, c *azservicebus.Client, queue string, n int, body string) (*azservicebus.Receiver, *azservicebus.ReceivedMessage) {
	t.Helper()
	snd, err := c.NewSender(queue, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte(body)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rcv, err := c.NewReceiverForQueue(queue, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %d messages, %v", len(msgs), err)
	}
	return rcv, msgs[0]
}

// ctx returns a context that ends with the test or after d.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// engineOpts returns engine options for tests on the real clock.
func engineOpts() engine.Options { return engine.Options{} }

// smallQueue has a 1 KB message limit and a link credit test value.
func smallQueue() broker.EntitySettings {
	return broker.EntitySettings{MaxMessageSizeInKilobytes: 1}
}
