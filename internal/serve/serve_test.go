package serve

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// brokenListener accepts nothing: its Accept fails at once, as a listener
// whose socket went away does.
type brokenListener struct{ net.Listener }

var errGone = errors.New("socket gone")

func (l brokenListener) Accept() (net.Conn, error) { return nil, errGone }

// One port takes AMQP and HTTP alike; a port that stops serving is
// reported on Errors with its address, the others keep serving; Close
// stops them all and reports nothing more.
func TestPortsServeAndReportFailures(t *testing.T) {
	amqp := make(chan string, 1)
	good, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{
		AMQP: func(nc net.Conn) {
			b := make([]byte, 8)
			_, _ = io.ReadFull(nc, b)
			amqp <- string(b[:4])
			_ = nc.Close()
		},
		HTTP: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }),
	}, good, brokenListener{bad})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.Errors():
		if !errors.Is(err, errGone) || !strings.Contains(err.Error(), bad.Addr().String()) {
			t.Fatalf("the failed port reported %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the failed port was not reported")
	}

	c, err := net.Dial("tcp", good.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("AMQP\x00\x01\x00\x00"))
	if got := <-amqp; got != "AMQP" {
		t.Fatalf("the AMQP side got %q", got)
	}
	_ = c.Close()
	res, err := http.Get("http://" + good.Addr().String() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if string(body) != "ok" {
		t.Fatalf("the HTTP side answered %q", body)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", good.Addr().String()); err == nil {
		t.Fatal("the port still accepts after Close")
	}
	select {
	case err := <-s.Errors():
		t.Fatalf("Close reported %v", err)
	default:
	}
}
