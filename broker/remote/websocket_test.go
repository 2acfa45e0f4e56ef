package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/internal/brokertest"
	"github.com/peeklock/peeklock/internal/serve"
)

// frontOf serves env's listener on a second port through the serve
// assembly with TLS (a fresh local CA), the HTTPS admin API and AMQP over
// WebSockets, and returns its port and the pool that trusts the CA.
func frontOf(t *testing.T, env *serveEnv) (port string, roots *x509.CertPool) {
	t.Helper()
	server, roots, _ := brokertest.LocalCA(t)
	addr := brokertest.ServePort(t, serve.Options{
		AMQP: env.srv.ServeConn,
		HTTP: admin.NewHandler(env.eng, admin.Options{}),
		TLS:  server,
	})
	_, port, _ = net.SplitHostPort(addr)
	return port, roots
}

// sendAndReceive sends one message to q through c and receives and
// completes it.
func sendAndReceive(t *testing.T, c *Client, q string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Send(ctx, q, textMessages(1)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: q, Mode: broker.PeekLock, Max: 1, MaxWait: 5 * time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("Receive: %v, %v", got, err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: q, Token: got[0].LockToken}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
}

// TestWebSocketsAgainstServe: TransportType=AmqpWebSockets sends AMQP over
// wss://HOST:PORT/$servicebus/websocket, and the admin API goes to
// https://HOST:PORT, the endpoint's port.
func TestWebSocketsAgainstServe(t *testing.T) {
	env := newServe(t, nil)
	env.queue("orders", broker.EntitySettings{})
	port, roots := frontOf(t, env)
	cs, err := ParseConnectionString("Endpoint=sb://localhost:" + port + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;TransportType=AmqpWebSockets")
	if err != nil {
		t.Fatal(err)
	}
	before := env.srv.Connections()
	tlsCfg := &tls.Config{RootCAs: roots}
	c := env.dial(Config{Conn: cs, TLSConfig: tlsCfg, Timeout: 10 * time.Second,
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}})
	if env.srv.Connections() != before+1 {
		t.Fatalf("%d connections on the listener, want %d", env.srv.Connections(), before+1)
	}
	sendAndReceive(t, c, "orders")
	ents, err := c.Entities(context.Background())
	if err != nil || len(ents) != 1 || ents[0].Path != "orders" {
		t.Fatalf("Entities over https://localhost:%s: %v, %v", port, ents, err)
	}
}

// TestWebSocketsThroughProxy: with HTTPS_PROXY set, the WebSocket goes
// through the proxy's CONNECT tunnel. The endpoint is "localhost." (not a
// loopback name the proxy rules exempt, and one nothing resolves: only the
// proxy can reach it).
func TestWebSocketsThroughProxy(t *testing.T) {
	env := newServe(t, nil)
	env.queue("orders", broker.EntitySettings{})
	port, roots := frontOf(t, env)
	px := brokertest.NewConnectProxy(t, "127.0.0.1:"+port)
	t.Setenv("HTTPS_PROXY", "http://"+px.Addr())
	t.Setenv("NO_PROXY", "")
	cs, err := ParseConnectionString("Endpoint=sb://localhost.:" + port + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true")
	if err != nil {
		t.Fatal(err)
	}
	cs.WebSockets = true // as connect --websockets does
	tlsCfg := &tls.Config{RootCAs: roots}
	// The admin client's own transport reads the same variables.
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg,
		Proxy: func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }}}
	c := env.dial(Config{Conn: cs, TLSConfig: tlsCfg, HTTPClient: hc, Timeout: 10 * time.Second})
	sendAndReceive(t, c, "orders")
	if _, err := c.Entities(context.Background()); err != nil {
		t.Fatalf("Entities through the proxy: %v", err)
	}
	seen := px.Seen()
	if len(seen) < 2 || seen[0] != "localhost.:"+port {
		t.Fatalf("the proxy tunnelled %v, want localhost.:%s for the WebSocket and the admin API", seen, port)
	}

	// NO_PROXY exempts the host: the dial then fails (nothing resolves it).
	t.Setenv("NO_PROXY", "localhost.")
	if _, err := Dial(context.Background(), Config{Conn: cs, TLSConfig: tlsCfg, HTTPClient: hc, Timeout: 5 * time.Second}); err == nil {
		t.Fatal("dial with the host in NO_PROXY succeeded; it cannot resolve localhost.")
	}
	if n := len(px.Seen()); n != len(seen) {
		t.Errorf("the proxy was used although NO_PROXY names the host")
	}
}

// TestWebSocketsNeedServiceBus: an amqp:// URL cannot use WebSockets.
func TestWebSocketsNeedServiceBus(t *testing.T) {
	cs, err := ParseConnectionString("amqp://guest:guest@localhost:5672")
	if err != nil {
		t.Fatal(err)
	}
	cs.WebSockets = true
	if _, err := Dial(context.Background(), Config{Conn: cs}); broker.CodeOf(err) != broker.CodeInvalid {
		t.Fatalf("Dial: %v, want an invalid error", err)
	}
}
