package remote

import (
	"context"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// genericAddress: an address ("/…") is used as it is everywhere; a plain
// name is a RabbitMQ queue on RabbitMQ, and the address itself on a broker
// whose open names another product.
func TestGenericAddress(t *testing.T) {
	c := &Client{}
	for _, tc := range []struct {
		name      string
		notRabbit bool
		send      bool
		want      string
	}{
		{"orders", false, true, "/queue/orders"},
		{"orders", false, false, "/amq/queue/orders"},
		{"/exchange/logs/info", false, true, "/exchange/logs/info"},
		{"/amq/queue/orders", false, false, "/amq/queue/orders"},
		{"orders", true, true, "orders"},
		{"orders", true, false, "orders"},
		{"/topic/a.b", true, false, "/topic/a.b"},
	} {
		c.notRabbit.Store(tc.notRabbit)
		if got := c.genericAddress(tc.name, tc.send); got != tc.want {
			t.Errorf("genericAddress(%q, send %v) with notRabbit %v = %q, want %q", tc.name, tc.send, tc.notRabbit, got, tc.want)
		}
	}
	if !isRabbitMQ(map[string]any{"product": "RabbitMQ", "version": "3.10.8"}) || isRabbitMQ(map[string]any{"product": "apache-activemq-artemis"}) || isRabbitMQ(nil) {
		t.Error("isRabbitMQ misreads an open's product")
	}
}

// On RabbitMQ its open is recognised, and full addresses work beside plain
// names: a message sent to /queue/NAME is received from /amq/queue/NAME and
// from the plain NAME alike.
func TestRabbitFullAddresses(t *testing.T) {
	c := dialRabbit(t)
	if c.notRabbit.Load() {
		t.Fatal("RabbitMQ's open is not recognised as RabbitMQ")
	}
	ctx := context.Background()
	q := rabbitQueue(t, c, 0)
	if err := c.Send(ctx, "/queue/"+q, textMessages(2)); err != nil {
		t.Fatalf("send to /queue/%s: %v", q, err)
	}
	for _, entity := range []string{"/amq/queue/" + q, q} {
		got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: entity, Mode: broker.PeekLock, Max: 1, MaxWait: 2 * time.Second})
		if err != nil || len(got) != 1 {
			t.Fatalf("receive from %s: %d messages, %v", entity, len(got), err)
		}
		if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: entity, Token: got[0].LockToken}); err != nil {
			t.Fatalf("complete on %s: %v", entity, err)
		}
	}
}
