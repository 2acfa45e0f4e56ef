package remote

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"

	"github.com/coder/websocket"
	"golang.org/x/net/http/httpproxy"
)

// webSocketSubprotocol is the AMQP WebSocket binding's subprotocol, which
// Service Bus requires.
const webSocketSubprotocol = "AMQPWSB10"

// tlsConfig returns the TLS configuration for the endpoint: a copy of
// Config.TLSConfig, or the system's trust with the endpoint's host name.
func (c *Client) tlsConfig() *tls.Config {
	if c.cfg.TLSConfig != nil {
		return c.cfg.TLSConfig.Clone() // go-amqp writes ServerName into it
	}
	return &tls.Config{ServerName: c.cfg.Conn.Host, MinVersion: tls.VersionTLS12}
}

// dialWebSocket opens a WebSocket to the endpoint's AMQP WebSocket URL
// (wss://HOST:PORT/$servicebus/websocket) and returns it as a connection
// that carries AMQP. It goes through the proxy that HTTPS_PROXY names,
// unless NO_PROXY exempts the host (read at each dial; loopback addresses
// never use a proxy).
func (c *Client) dialWebSocket(ctx context.Context) (net.Conn, error) {
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	tr := &http.Transport{
		Proxy:               func(r *http.Request) (*url.URL, error) { return proxy(r.URL) },
		TLSClientConfig:     c.tlsConfig(),
		TLSHandshakeTimeout: c.cfg.Timeout,
	}
	ws, _, err := websocket.Dial(ctx, c.cfg.Conn.WebSocketURL(), &websocket.DialOptions{
		HTTPClient:   &http.Client{Transport: tr},
		Subprotocols: []string{webSocketSubprotocol},
	})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(-1) // AMQP frames bound themselves (max-frame-size)
	return websocket.NetConn(context.Background(), ws, websocket.MessageBinary), nil
}
