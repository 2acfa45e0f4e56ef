package remote

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// TestServeDataSections sends a body of two data sections through the
// remote client to the listener and reads it back every way the client
// can: peek over $management, receive on a link, receive by sequence number
// over $management after a defer. Each time the sections are as sent, and
// the engine stored them so.
func TestServeDataSections(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()

	m := &broker.Message{MessageID: "sections"}
	m.SetSections([][]byte{[]byte("Hello World"), []byte("And another message!")})
	if err := c.Send(ctx, "q", []*broker.Message{m}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	check := func(where string, got *broker.Message) {
		t.Helper()
		s := got.Sections()
		if len(s) != 2 || !bytes.Equal(s[0], []byte("Hello World")) || !bytes.Equal(s[1], []byte("And another message!")) {
			t.Fatalf("%s: sections %q, want the two sent", where, s)
		}
	}
	stored, err := env.eng.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 1})
	if err != nil || len(stored) != 1 {
		t.Fatalf("engine browse: %v, %v", stored, err)
	}
	check("stored", stored[0])

	page, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 1})
	if err != nil || len(page) != 1 {
		t.Fatalf("Browse: %v, %v", page, err)
	}
	check("peek", page[0])

	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 1, MaxWait: 5 * time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("Receive: %v, %v", got, err)
	}
	check("receive", got[0])
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Defer, Entity: "q", Token: got[0].LockToken}); err != nil {
		t.Fatalf("defer: %v", err)
	}
	d, err := c.ReceiveDeferred(ctx, "q", []int64{got[0].SequenceNumber})
	if err != nil || len(d) != 1 {
		t.Fatalf("ReceiveDeferred: %v, %v", d, err)
	}
	check("receive by sequence number", d[0])
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "q", Token: d[0].LockToken}); err != nil {
		t.Fatalf("complete: %v", err)
	}
}
