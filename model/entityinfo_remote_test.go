package model

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/remote"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/internal/brokertest"
)

// serveRemote puts the AMQP listener and the admin API in front of eng and
// returns a remote client of them (peeklock connect to peeklock serve).
func serveRemote(t *testing.T, eng *engine.Engine, clock clockwork.Clock) broker.Client {
	t.Helper()
	b := brokertest.Start(t, brokertest.Options{
		Engine: eng,
		Listener: func(eng *engine.Engine) (brokertest.Listener, error) {
			return amqpserver.New(eng, amqpserver.Options{IdleTimeout: -1, Clock: clock})
		},
		Admin: &admin.Options{Host: "127.0.0.1", Clock: clock},
	})
	cs, err := remote.ParseConnectionString(fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true",
		b.Addr, sas.DefaultKeyName, sas.DefaultKey))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := remote.Dial(context.Background(), remote.Config{Conn: cs, AdminURL: b.AdminURL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// Over a remote endpoint (our own listener and admin API), the info view
// shows the settings from the ATOM descriptions and reads a subscription's
// rules from the admin API when it opens; the subscription without rules
// shows the $Default TrueFilter as Service Bus lists it.
func TestInfoOverRemote(t *testing.T) {
	clock, c := infoFixture(t)
	rc := serveRemote(t, c.(*engine.Engine), clock)
	h := newHarness(t, rc, clock, Options{Entity: "orders"}, 100, 30)
	h.key("i")
	wantLines(t, infoText(h),
		"Lock duration            1m (default)",
		"Max delivery count       3 deliveries",
		"Default message TTL      14d",
		"Forward dead letters to  poison",
		"owner: team-orders",
	)
	h.key("esc")
	h.m.switchEntity("events/Subscriptions/billing")
	h.refresh()
	h.key("i")
	wantLines(t, infoText(h),
		"▸ red  created 2025-03-01 12:00:00Z",
		"  filter  SQL: color = @color AND quantity > 5",
		"          parameter @color = red (string)",
		"  action  SQL: SET priority = @level",
		"          parameter @level = 3 (int32)", // an xs:int, as the admin API writes an int64 that fits
		"          CorrelationId = cart-7",
		"          property tier = 2 (int32)", // the admin API writes an xs:int
		"  filter  FalseFilter (1=0): matches no message",
	)
	h.key("[")
	wantLines(t, infoText(h), "▸ $Default  created 2025-03-01 12:00:00Z", "  filter  TrueFilter (1=1): matches every message")
}
