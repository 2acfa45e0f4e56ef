package amqpserver

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/engine"
)

// fuzzFrames encodes frames for the seed corpus.
func fuzzFrames(ps ...wire.Performative) []byte {
	var b []byte
	for _, p := range ps {
		var err error
		if b, err = wire.AppendFrame(b, wire.FrameAMQP, 0, p); err != nil {
			panic(err)
		}
	}
	return b
}

// FuzzConnection feeds arbitrary bytes after the AMQP protocol header to a
// connection. The listener must never panic and must end the connection by
// itself (with a close frame) or when the peer goes away.
func FuzzConnection(f *testing.F) {
	open := &wire.Open{ContainerID: "fuzz", MaxFrameSize: 4096}
	begin := &wire.Begin{IncomingWindow: 100, OutgoingWindow: 100}
	attachSnd := &wire.Attach{Name: "s", Handle: 0, Role: wire.RoleSender, Target: &wire.Target{Address: "q"}, Source: &wire.Source{Address: "c"}}
	attachRcv := &wire.Attach{Name: "r", Handle: 1, Role: wire.RoleReceiver, Source: &wire.Source{Address: "q"}, Target: &wire.Target{Address: "c"},
		RcvSettleMode: wire.Some(wire.ReceiverSettleSecond)}
	msg := wire.EncodeMessage(nil, &broker.Message{MessageID: "m", Body: []byte("hello")}, wire.EncodeOptions{})
	f.Add([]byte{})
	f.Add(fuzzFrames(open))
	f.Add(fuzzFrames(open, begin, attachSnd,
		&wire.Transfer{Handle: 0, DeliveryID: wire.Some[uint32](0), DeliveryTag: []byte{1}, Payload: msg},
		&wire.Detach{Handle: 0, Closed: true}, &wire.End{}, &wire.Close{}))
	f.Add(fuzzFrames(open, begin, attachRcv,
		&wire.Flow{NextIncomingID: wire.Some[uint32](0), IncomingWindow: 100, OutgoingWindow: 100, Handle: wire.Some[uint32](1),
			DeliveryCount: wire.Some[uint32](0), LinkCredit: wire.Some[uint32](5), Drain: true},
		&wire.Disposition{Role: wire.RoleReceiver, First: 0, Last: wire.Some[uint32](1 << 30), Settled: true, State: wire.Accepted{}}))
	f.Add(fuzzFrames(open, begin, &wire.Attach{Name: "m", Handle: 2, Role: wire.RoleSender, Target: &wire.Target{Address: "q/$management"}}))
	f.Add(append(fuzzFrames(open), 0, 0, 0, 8, 2, 0, 0, 0, 0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53, 0x10, 0x45))

	eng, err := engine.New(engine.Options{})
	if err != nil {
		f.Fatal(err)
	}
	if err := eng.CreateEntity(context.Background(), broker.Entity{Path: "q", Kind: broker.KindQueue}); err != nil {
		f.Fatal(err)
	}
	srv, err := New(eng, Options{AllowAnonymous: true, MaxFrameSize: 4096})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		_ = srv.Close()
		_ = eng.Close()
	})
	closeFrame := fuzzFrames(&wire.Close{})
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		srv.ServeConn(server)
		ended := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, client)
			close(ended)
		}()
		_ = client.SetWriteDeadline(time.Now().Add(2 * time.Second))
		in := append(wire.HeaderAMQP.Append(nil), data...)
		if _, err := client.Write(append(in, closeFrame...)); err == nil {
			select {
			case <-ended:
			case <-time.After(200 * time.Millisecond):
				// Waiting for the rest of a frame: the peer goes away.
			}
		}
		_ = client.Close()
		<-ended
		deadline := time.Now().Add(5 * time.Second)
		for srv.Connections() != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the connection did not end")
			}
			time.Sleep(time.Millisecond)
		}
		if n := srv.panics.Load(); n != 0 {
			t.Fatalf("%d panics recovered", n)
		}
	})
}
