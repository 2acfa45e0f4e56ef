package engine

import (
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// TestServiceBusWording: errors that official SDK tests read carry Service
// Bus's own words (followed by the details), besides the right code.
func TestServiceBusWording(t *testing.T) {
	f := newFixture(t, store.NewMemory())
	f.queue("q", broker.EntitySettings{})
	if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}); err != nil {
		t.Fatal(err)
	}
	if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"q":                 "The value for the RequiresSession property of an existing Queue cannot be changed.",
		"t/Subscriptions/s": "The value for the RequiresSession property of an existing Subscription cannot be changed.",
	} {
		kind := broker.KindQueue
		if strings.Contains(path, "/") {
			kind = broker.KindSubscription
		}
		err := f.e.UpdateEntity(f.ctx, broker.Entity{Path: path, Kind: kind, Settings: broker.EntitySettings{RequiresSession: true}})
		if e := wantCode(t, err, broker.CodeInvalid); e.Message != want {
			t.Errorf("update %s: %q, want %q", path, e.Message, want)
		}
	}
	_, err := f.e.RenewLock(f.ctx, "q", broker.LockToken{})
	e := wantCode(t, err, broker.CodeLockLost)
	if !strings.HasPrefix(e.Message, "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue") ||
		!strings.Contains(e.Message, "00000000-0000-0000-0000-000000000000") {
		t.Errorf("lock lost: %q", e.Message)
	}
}
