package broker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// sessionFake is a client with sessions whose state reads "st".
type sessionFake struct {
	broker.Client
	locked bool
}

func (f *sessionFake) Capabilities() broker.Capabilities {
	return broker.Capabilities{Has: broker.AllCapabilities}
}

func (f *sessionFake) LockSession(context.Context, string, string, time.Duration) (broker.SessionLock, error) {
	f.locked = true
	return broker.SessionLock{}, nil
}

func (f *sessionFake) ReceiveFromSession(context.Context, string, broker.ReceiveRequest) ([]*broker.Message, error) {
	return nil, nil
}

func (f *sessionFake) ReceiveDeferredFromSession(context.Context, string, string, []int64) ([]*broker.Message, error) {
	f.locked = true
	return nil, nil
}

func (f *sessionFake) RenewSession(context.Context, string, string) (time.Time, error) {
	return time.Time{}, nil
}

func (f *sessionFake) UnlockSession(context.Context, string, string) error { return nil }

func (f *sessionFake) SessionState(context.Context, string, string) ([]byte, error) {
	return []byte("st"), nil
}

// A read-only client refuses every session operation that changes something
// and passes reading the state through.
func TestReadOnlySessions(t *testing.T) {
	ctx := context.Background()
	inner := &sessionFake{}
	sc, ok := broker.SessionsOf(broker.ReadOnly(inner))
	if !ok {
		t.Fatal("read-only wrapper hides sessions")
	}
	want := map[string]error{}
	_, want["accept session is not allowed in read-only mode"] = sc.LockSession(ctx, "q", "", 0)
	_, want["receive is not allowed in read-only mode"] = sc.ReceiveFromSession(ctx, "A", broker.ReceiveRequest{Entity: "q", Max: 1})
	_, want["receive deferred is not allowed in read-only mode"] = sc.ReceiveDeferredFromSession(ctx, "q", "A", []int64{1})
	_, want["renew session lock is not allowed in read-only mode"] = sc.RenewSession(ctx, "q", "A")
	want["release session lock is not allowed in read-only mode"] = sc.UnlockSession(ctx, "q", "A")
	for msg, err := range want {
		var be *broker.Error
		if !errors.As(err, &be) || be.Code != broker.CodeReadOnly || be.Message != msg {
			t.Errorf("got %v, want read-only %q", err, msg)
		}
	}
	if inner.locked {
		t.Error("the lock reached the endpoint")
	}
	if st, err := sc.SessionState(ctx, "q", "A"); err != nil || string(st) != "st" {
		t.Errorf("state = %q, %v", st, err)
	}
}

// A client without CanSessions is no session client, wrapped or not.
func TestSessionsOfNeedsCapability(t *testing.T) {
	inner := &noSessions{sessionFake{}}
	if _, ok := broker.SessionsOf(inner); ok {
		t.Error("SessionsOf ignores the capability")
	}
	if _, ok := broker.SessionsOf(broker.ReadOnly(inner)); ok {
		t.Error("SessionsOf ignores the capability through ReadOnly")
	}
}

type noSessions struct{ sessionFake }

func (n *noSessions) Capabilities() broker.Capabilities {
	return broker.Capabilities{Has: broker.AllCapabilities &^ broker.CanSessions}
}
