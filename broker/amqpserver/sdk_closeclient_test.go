package amqpserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
)

// onlyClient waits for exactly one connection other than not and returns
// its id.
func onlyClient(t *testing.T, ctx context.Context, cl broker.ClientLister, not string) string {
	t.Helper()
	var id string
	waitFor(t, 10*time.Second, "one connection", func() bool {
		cs, err := cl.Clients(ctx)
		if err != nil || len(cs) != 1 || cs[0].ID == not {
			return false
		}
		id = cs[0].ID
		return true
	})
	return id
}

// An operator closes an official SDK client's connection: it
// is gone from the list at once, and the client connects again to
// send.
func TestSDKCloseClient(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.queue("q", broker.EntitySettings{LockDuration: time.Minute})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, err := c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil); err != nil {
		t.Fatal(err)
	}
	rcv, err := c.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %d messages, %v", len(msgs), err)
	}
	cl, _ := broker.ClientsOf(env.eng)
	closer, ok := broker.ClientCloserOf(env.eng)
	if !ok {
		t.Fatal("the engine cannot close its clients' connections")
	}
	id := onlyClient(t, ctx, cl, "")
	if err := closer.CloseClient(ctx, "0123456789abcdef", "nobody"); !errors.Is(err, broker.ErrNotFound) {
		t.Errorf("closing an unknown id: %v, want not found", err)
	}
	if err := closer.CloseClient(ctx, id, "test"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the connection gone", func() bool {
		cs, err := cl.Clients(ctx)
		return err == nil && !slices.ContainsFunc(cs, func(c broker.ClientConn) bool { return c.ID == id })
	})
	// The SDK sees the close (amqp:connection:forced, TestCloseClientFrame
	// checks the frame) and connects again to send. The message lock it
	// held outlives the connection, as on any lost connection (Service Bus
	// keeps it until it expires or is settled by lock token).
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("y")}, nil); err != nil {
		t.Fatalf("send after the close: %v", err)
	}
	if e, err := env.eng.Entity(ctx, "q"); err != nil || e.Counts.Active != 1 || e.Counts.Locked != 1 {
		t.Errorf("after the close and a send: %+v, %v; want 1 active, 1 locked", e.Counts, err)
	}
	onlyClient(t, ctx, cl, id)
	if err := closer.CloseClient(ctx, id, "again"); !errors.Is(err, broker.ErrNotFound) {
		t.Errorf("closing a closed connection: %v, want not found", err)
	}
}

// The close frame an operator's close sends carries amqp:connection:forced
// and says who closed it and why.
func TestCloseClientFrame(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	ctx := testCtx(t, 30*time.Second)
	conn, err := amqp.Dial(ctx, "amqp://"+env.addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(DefaultKeyName, DefaultKey)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cl, _ := broker.ClientsOf(env.eng)
	closer, _ := broker.ClientCloserOf(env.eng)
	if err := closer.CloseClient(ctx, onlyClient(t, ctx, cl, ""), "stuck consumer"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the client did not see its connection closed")
	}
	var ce *amqp.ConnError
	if !errors.As(conn.Err(), &ce) || ce.RemoteErr == nil || ce.RemoteErr.Condition != amqp.ErrCondConnectionForced ||
		ce.RemoteErr.Description != "closed by operator: stuck consumer" {
		t.Fatalf("connection error %#v, want amqp:connection:forced \"closed by operator: stuck consumer\"", conn.Err())
	}
}

// Without a listener the engine says it has no connections to close.
func TestCloseClientWithoutListener(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	_ = env.srv.Close()
	err := env.eng.CloseClient(context.Background(), "x", "")
	if !errors.Is(err, broker.ErrNotSupported) || !strings.Contains(err.Error(), "no AMQP listener") {
		t.Errorf("CloseClient without a listener: %v", err)
	}
}
