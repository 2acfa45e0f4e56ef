package brokertest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
)

// ConnectProxy is an HTTP CONNECT proxy on 127.0.0.1 that tunnels every
// connection to one address, whatever host the client names, and records
// the hosts named: for the tests of clients behind HTTPS_PROXY.
type ConnectProxy struct {
	l       net.Listener
	target  string
	mu      sync.Mutex
	targets []string
}

// NewConnectProxy starts a proxy to target, closed when the test ends.
func NewConnectProxy(t testing.TB, target string) *ConnectProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &ConnectProxy{l: l, target: target}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.tunnel(c)
		}
	}()
	t.Cleanup(func() { _ = l.Close() })
	return p
}

// Addr returns the proxy's host:port.
func (p *ConnectProxy) Addr() string { return p.l.Addr().String() }

// Seen returns the hosts the clients named, in order.
func (p *ConnectProxy) Seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

func (p *ConnectProxy) tunnel(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	}
	p.mu.Lock()
	p.targets = append(p.targets, req.Host)
	p.mu.Unlock()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer s.Close()
	_, _ = io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
	go func() { _, _ = io.Copy(s, br); _ = s.Close() }()
	_, _ = io.Copy(c, s)
}
