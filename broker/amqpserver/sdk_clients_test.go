package amqpserver

import (
	"context"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// An official SDK receiver that took what it asked for holds no credit
// while messages wait: the engine's client list (through the listener)
// shows its connection, key name, container id and links, and flags the
// receiver as starved; once the messages are gone it is not.
func TestSDKClientsFlagStarvedReceiver(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	rcv, _ := sendThenReceive(t, ctx, c, "q", 3, "x")

	cl, ok := broker.ClientsOf(env.eng)
	if !ok {
		t.Fatal("the engine lists no clients")
	}
	var rl, sl *broker.ClientLink
	var conn broker.ClientConn
	waitFor(t, 10*time.Second, "a starved receiver and a sender", func() bool {
		cs, err := cl.Clients(ctx)
		if err != nil || len(cs) != 1 {
			return false
		}
		conn, rl, sl = cs[0], nil, nil
		for i := range conn.Links {
			l := &conn.Links[i]
			if l.Receiver {
				rl = l
			} else {
				sl = l
			}
		}
		return rl != nil && sl != nil && rl.Starved()
	})
	if !conn.Authenticated || conn.User != DefaultKeyName || conn.ContainerID == "" || conn.Remote == "" || conn.ConnectedAt.IsZero() {
		t.Errorf("connection = %+v", conn)
	}
	if rl.Entity != "q" || rl.Credit != 0 || rl.Waiting != 2 || rl.Moved != 1 || rl.Unsettled != 1 {
		t.Errorf("receiver = %+v, want q, credit 0, 2 waiting, 1 moved, 1 unsettled", *rl)
	}
	if sl.Entity != "q" || sl.Moved != 3 || sl.Starved() {
		t.Errorf("sender = %+v", *sl)
	}

	// Receiving the rest gives credit back and leaves nothing waiting.
	for got := 0; got < 2; {
		ms, err := rcv.ReceiveMessages(ctx, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		got += len(ms)
	}
	cs, err := cl.Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range cs[0].Links {
		if l.Starved() {
			t.Errorf("link %+v is starved with nothing waiting", l)
		}
	}
}

// Without a listener the engine says it has no clients to show.
func TestClientsWithoutListener(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	_ = env.srv.Close()
	_, err := env.eng.Clients(context.Background())
	if be, ok := err.(*broker.Error); !ok || be.Code != broker.CodeNotSupported {
		t.Errorf("Clients after Close: %v, want CodeNotSupported", err)
	}
}
