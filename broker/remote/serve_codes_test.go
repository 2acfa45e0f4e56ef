package remote

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/internal/brokertest"
)

// failingStore is a memory store whose writes fail, while fail holds a
// code, with a *broker.Error of that code: the engine passes the code of a
// store error on, so the listener answers with it.
type failingStore struct {
	store.Store
	fail atomic.Int32 // 1 + the code; 0 writes
}

func (s *failingStore) Apply(b *store.Batch) (store.Pending, error) {
	if f := s.fail.Load(); f != 0 {
		code := broker.Code(f - 1)
		return nil, &broker.Error{Code: code, Message: "injected " + code.String()}
	}
	return s.Store.Apply(b)
}

// codesOnTheWire are the codes that do not come back from the listener as
// themselves, with what they come back as (sbamqp's wireLosses): Service
// Bus has no condition for them, and the engine does not fail with them
// for a listener's request.
var codesOnTheWire = map[broker.Code]broker.Code{
	broker.CodeClosed:         broker.CodeUnknown,
	broker.CodeConnectionLost: broker.CodeUnknown,
	broker.CodeReadOnly:       broker.CodeUnauthorized,
}

// Every broker.Code that the engine fails with crosses the listener and
// comes back from the remote client as itself: in the rejected outcome of
// a send (an AMQP error condition) and in the response of a $management
// request (a condition and a status code). A code added to broker without
// a wire form, or a mapping that breaks on either side, fails here.
func TestEveryCodeCrossesTheWire(t *testing.T) {
	st := &failingStore{Store: store.NewMemory()}
	b := brokertest.Start(t, brokertest.Options{
		EngineOptions: engine.Options{Store: st},
		Listener: func(eng *engine.Engine) (brokertest.Listener, error) {
			return amqpserver.New(eng, amqpserver.Options{})
		},
	})
	ctx := context.Background()
	if err := b.Engine.CreateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue}); err != nil {
		t.Fatal(err)
	}
	cs, err := ParseConnectionString(fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true",
		b.Addr, sas.DefaultKeyName, sas.DefaultKey))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, Config{Conn: cs, Timeout: 10 * time.Second, Logger: debugLogger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	for code := broker.Code(0); code == 0 || code.String() != broker.CodeUnknown.String(); code++ {
		want := code
		if w, ok := codesOnTheWire[code]; ok {
			want = w
		}
		st.fail.Store(int32(code) + 1)
		msg := []*broker.Message{{Body: []byte("x")}}
		err := c.Send(ctx, "q", msg)
		if got := broker.CodeOf(err); got != want {
			t.Errorf("send failing with %v: the client got %v (%v), want %v", code, got, err, want)
		}
		_, err = c.Schedule(ctx, "q", time.Now().Add(time.Hour), msg)
		if got := broker.CodeOf(err); got != want {
			t.Errorf("schedule failing with %v: the client got %v (%v), want %v", code, got, err, want)
		}
		var be *broker.Error
		if errors.As(err, &be) && code != broker.CodeUnknown && be.TrackingID == "" {
			t.Errorf("schedule failing with %v: no tracking id in %v", code, err)
		}
	}
	st.fail.Store(0)
	if err := c.Send(ctx, "q", []*broker.Message{{Body: []byte("ok")}}); err != nil {
		t.Fatalf("send after the failures: %v", err)
	}
}
