package brokertest_test

import (
	"net"
	"net/http"
	"testing"

	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/internal/brokertest"
)

// Start serves AMQP and the admin API on one port while the test runs, and
// at its end closes the port (which served until then), the listener and
// the engine it made.
func TestStartAndStop(t *testing.T) {
	var served error
	stopped := false
	var b *brokertest.Broker
	t.Run("running", func(t *testing.T) {
		b = brokertest.Start(t, brokertest.Options{
			Listener: func(e *engine.Engine) (brokertest.Listener, error) { return amqpserver.New(e, amqpserver.Options{}) },
			Served:   func(err error) { served = err; stopped = true },
			Admin:    &admin.Options{Host: "127.0.0.1"},
		})
		c, err := net.Dial("tcp", b.Addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		res, err := http.Get(b.AdminURL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/health: %s", res.Status)
		}
	})
	if !stopped || served != nil {
		t.Errorf("the port: stopped %v, error %v; want stopped without an error", stopped, served)
	}
	if _, err := b.Engine.Entities(t.Context()); err == nil {
		t.Error("the engine Start made is still open after the test")
	}
	if _, err := net.Dial("tcp", b.Addr); err == nil {
		t.Error("the listener still accepts after the test")
	}
}
