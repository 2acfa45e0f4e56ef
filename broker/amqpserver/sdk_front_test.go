package amqpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/coder/websocket"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// The official Go SDK against the listener behind a front, with nothing
// adapted but trust in the local CA: AMQP over TLS, the admin client over
// HTTPS on the same port, and AMQP over WebSockets.

// sendReceive sends one message to q and receives and completes it.
func sendReceive(t *testing.T, c *azservicebus.Client, q, body string) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	snd, err := c.NewSender(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close(ctx)
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte(body)}, nil); err != nil {
		t.Fatalf("send: %v", err)
	}
	rcv, err := c.NewReceiverForQueue(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close(ctx)
	msgs, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != body {
		t.Fatalf("receive: %v, %v", msgs, err)
	}
	if err := rcv.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Fatalf("complete: %v", err)
	}
}

func sdkClient(t *testing.T, conn string, opts *azservicebus.ClientOptions) *azservicebus.Client {
	t.Helper()
	if opts == nil {
		opts = &azservicebus.ClientOptions{}
	}
	opts.RetryOptions = azservicebus.RetryOptions{MaxRetries: 1, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}
	c, err := azservicebus.NewClientFromConnectionString(conn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func TestSDKOverTLSWithLocalCA(t *testing.T) {
	env := newFrontEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	before := env.srv.Connections()
	sendReceive(t, sdkClient(t, env.tlsConnString(), &azservicebus.ClientOptions{TLSConfig: env.tlsConfig()}), "q", "over TLS")
	// Plain AMQP on the same port still works.
	sendReceive(t, sdkClient(t, env.emulatorConnString(), nil), "q", "plain")
	if n := env.srv.Connections(); n < before+2 {
		t.Errorf("%d connections, want both clients' through the front", n)
	}

	// Without trust in the CA the TLS is real and refused.
	ctx := testCtx(t, 20*time.Second)
	snd, err := sdkClient(t, env.tlsConnString(), &azservicebus.ClientOptions{TLSConfig: &tls.Config{ServerName: "localhost"}}).NewSender("q", nil)
	if err == nil {
		err = snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	}
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("send without trusting the CA: %v, want a certificate error", err)
	}
}

// TestSDKAdminClientOverHTTPSOnTheAMQPPort: the SDK's admin client always
// sends https://HOST:PORT/ for the connection string's endpoint, the AMQP
// port; the front answers it there. No URL is rewritten.
func TestSDKAdminClientOverHTTPSOnTheAMQPPort(t *testing.T) {
	env := newFrontEnv(t, engine.Options{}, Options{})
	for _, conn := range []string{env.tlsConnString(), env.emulatorConnString()} {
		ac, err := sbadmin.NewClientFromConnectionString(conn, &sbadmin.ClientOptions{ClientOptions: azcore.ClientOptions{
			Transport: env.httpClient(),
			Retry:     policy.RetryOptions{MaxRetries: -1},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := testCtx(t, 30*time.Second)
		name := "adm" + env.port[len(env.port)-1:]
		if strings.HasSuffix(conn, "true") {
			name += "e"
		}
		if _, err := ac.CreateQueue(ctx, name, nil); err != nil {
			t.Fatalf("%s: CreateQueue: %v", conn, err)
		}
		sendReceive(t, sdkClient(t, env.emulatorConnString(), nil), name, "x")
		got, err := ac.GetQueueRuntimeProperties(ctx, name, nil)
		if err != nil || got == nil || got.TotalMessageCount != 0 {
			t.Fatalf("%s: GetQueueRuntimeProperties: %+v, %v", conn, got, err)
		}
	}
}

// TestSDKOverWebSockets: NewWebSocketConn as the SDK's own
// TestNewClientWithWebsockets writes it (subprotocol "amqp"), and with the
// binding's AMQPWSB10.
func TestSDKOverWebSockets(t *testing.T) {
	env := newFrontEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	for _, sub := range []string{"amqp", "AMQPWSB10"} {
		t.Run(sub, func(t *testing.T) {
			var host string
			c := sdkClient(t, env.tlsConnString(), &azservicebus.ClientOptions{
				NewWebSocketConn: func(ctx context.Context, args azservicebus.NewWebSocketConnArgs) (net.Conn, error) {
					host = args.Host
					ws, _, err := websocket.Dial(ctx, args.Host, &websocket.DialOptions{Subprotocols: []string{sub}, HTTPClient: env.httpClient()})
					if err != nil {
						return nil, err
					}
					return websocket.NetConn(context.Background(), ws, websocket.MessageBinary), nil
				},
			})
			sendReceive(t, c, "q", "over WebSockets")
			if want := "wss://localhost:" + env.port + "/$servicebus/websocket"; host != want {
				t.Errorf("the SDK dialled %q, want %q", host, want)
			}
		})
	}
}

// TestSDKWebSocketWithoutSubprotocolIsRefused: a WebSocket that offers no
// AMQP subprotocol never reaches the AMQP listener.
func TestSDKWebSocketWithoutSubprotocolIsRefused(t *testing.T) {
	env := newFrontEnv(t, engine.Options{}, Options{})
	ctx := testCtx(t, 10*time.Second)
	_, res, err := websocket.Dial(ctx, "wss://localhost:"+env.port+"/$servicebus/websocket", &websocket.DialOptions{HTTPClient: env.httpClient()})
	if err == nil || res == nil || res.StatusCode != 400 {
		t.Fatalf("dial without a subprotocol: %v, %v; want 400", res, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("timed out")
	}
}
