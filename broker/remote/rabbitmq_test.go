package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
)

// rabbitEnv is the environment variable naming a RabbitMQ 3.10 with the
// rabbitmq_amqp1_0 plugin (.ci/rabbitmq.sh starts one and prints it).
const rabbitEnv = "PEEKLOCK_RABBITMQ_URL"

// dialRabbit connects to the RabbitMQ of PEEKLOCK_RABBITMQ_URL, or skips.
func dialRabbit(t *testing.T, entities ...string) *Client {
	t.Helper()
	url := os.Getenv(rabbitEnv)
	if url == "" {
		t.Skipf("%s is not set: no RabbitMQ to test against (bash .ci/rabbitmq.sh starts one and prints the URL)", rabbitEnv)
	}
	cs, err := ParseConnectionString(url)
	if err != nil {
		t.Fatalf("%s: %v", rabbitEnv, err)
	}
	c, err := Dial(context.Background(), Config{Conn: cs, Entities: entities, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("Dial RabbitMQ at %s: %v", cs.Redacted(), err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rabbitQueue returns a fresh queue name and declares it (a send to
// /queue/NAME declares it) with n messages.
func rabbitQueue(t *testing.T, c *Client, n int) string {
	t.Helper()
	name := "peeklock-test-" + uuid.NewString()[:8]
	if n > 0 {
		if err := c.Send(context.Background(), name, textMessages(n)); err != nil {
			t.Fatalf("Send to %s: %v", name, err)
		}
	}
	t.Cleanup(func() {
		// Empty it so that test queues do not pile up messages.
		_, _ = c.Purge(context.Background(), name, broker.SubQueueMain)
	})
	return name
}

func TestRabbitSendReceiveAcceptReleaseReject(t *testing.T) {
	c := dialRabbit(t)
	ctx := context.Background()
	q := rabbitQueue(t, c, 4)

	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: q, Mode: broker.PeekLock, Max: 3, MaxWait: 2 * time.Second})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if len(got) != 3 {
		t.Fatalf("Receive got %d messages, want 3", len(got))
	}
	for i, m := range got {
		if string(m.Body) != fmt.Sprintf("m%d", i+1) || m.MessageID != fmt.Sprintf("id%d", i+1) || m.ContentType != "text/plain" {
			t.Fatalf("message %d = body %q id %q type %q", i, m.Body, m.MessageID, m.ContentType)
		}
		if !m.Locked() || m.SequenceNumber == 0 || m.DeliveryCount != 1 {
			t.Fatalf("message %d: token %v seq %d count %d; want held, numbered, count 1", i, m.LockToken, m.SequenceNumber, m.DeliveryCount)
		}
	}
	if got[0].SequenceNumber >= got[1].SequenceNumber {
		t.Fatalf("local sequence numbers not increasing: %v", seqs(got))
	}
	locked, err := c.Browse(ctx, broker.BrowseRequest{Entity: q, Category: broker.CategoryLocked, Max: 10})
	if err != nil || !reflect.DeepEqual(seqs(locked), seqs(got)) {
		t.Fatalf("Browse Locked = %v, %v; want %v", seqs(locked), err, seqs(got))
	}
	ents, err := c.Entities(ctx)
	if err != nil || len(ents) != 0 {
		t.Fatalf("Entities without configured names = %+v, %v; want none", ents, err)
	}

	// accept, release (give back), reject
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: q, Token: got[0].LockToken}); err != nil {
		t.Fatalf("accept: %v", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Abandon, Entity: q, Token: got[1].LockToken}); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: q, Token: got[2].LockToken, Reason: "bad"}); err != nil {
		t.Fatalf("reject: %v", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: q, Token: got[0].LockToken}); !errors.Is(err, broker.ErrLockLost) {
		t.Fatalf("second accept = %v, want lock lost", err)
	}
	// The released message comes back; the rejected one is gone (no
	// dead-letter exchange configured), the accepted one too.
	rest, err := c.Receive(ctx, broker.ReceiveRequest{Entity: q, Mode: broker.ReceiveAndDelete, Max: 10, MaxWait: 2 * time.Second})
	if err != nil {
		t.Fatalf("Receive rest: %v", err)
	}
	var bodies []string
	for _, m := range rest {
		bodies = append(bodies, string(m.Body))
		if m.Locked() {
			t.Fatalf("receive-and-delete message %q is locked", m.Body)
		}
	}
	if !reflect.DeepEqual(bodies, []string{"m2", "m4"}) && !reflect.DeepEqual(bodies, []string{"m4", "m2"}) {
		t.Fatalf("left in the queue: %q; want m2 (released) and m4", bodies)
	}
}

func TestRabbitUnsupportedKeepsSession(t *testing.T) {
	c := dialRabbit(t)
	ctx := context.Background()
	q := rabbitQueue(t, c, 2)
	caps := c.Capabilities()
	for _, cp := range []broker.Capability{broker.CanBrowse, broker.CanDefer, broker.CanAbandon, broker.CanRenewLock, broker.CanSchedule, broker.CanSessions, broker.CanListEntities} {
		if caps.Supports(cp) {
			t.Fatalf("generic capabilities include %b", cp)
		}
		if caps.Reason(cp) == "this endpoint does not support it" {
			t.Fatalf("capability %b has no reason of its own", cp)
		}
	}
	if caps.Reason(broker.CanAbandon) != "RabbitMQ has no modified outcome (it ends the session); abandon gives the message back with release" {
		t.Fatalf("abandon reason = %q", caps.Reason(broker.CanAbandon))
	}
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: q, Mode: broker.PeekLock, Max: 1, MaxWait: 2 * time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("Receive = %d, %v", len(got), err)
	}
	checks := map[string]error{}
	_, checks["browse"] = c.Browse(ctx, broker.BrowseRequest{Entity: q, Category: broker.CategoryActive, Max: 5})
	checks["defer"] = c.Settle(ctx, broker.Settlement{Kind: broker.Defer, Entity: q, Token: got[0].LockToken})
	_, checks["renew"] = c.RenewLock(ctx, q, got[0].LockToken)
	_, checks["schedule"] = c.Schedule(ctx, q, time.Now().Add(time.Hour), textMessages(1))
	checks["cancel"] = c.CancelScheduled(ctx, q, []int64{1})
	_, checks["receive deferred"] = c.ReceiveDeferred(ctx, q, []int64{1})
	_, checks["dead-letter queue"] = c.Receive(ctx, broker.ReceiveRequest{Entity: q, SubQueue: broker.SubQueueDeadLetter, Max: 1})
	for op, err := range checks {
		if !errors.Is(err, broker.ErrNotSupported) {
			t.Fatalf("%s = %v, want not supported", op, err)
		}
	}
	// The session and the held delivery survive: accept it, and receive the
	// second message.
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: q, Token: got[0].LockToken}); err != nil {
		t.Fatalf("accept after the refusals: %v", err)
	}
	more, err := c.Receive(ctx, broker.ReceiveRequest{Entity: q, Mode: broker.PeekLock, Max: 5, MaxWait: 2 * time.Second})
	if err != nil || len(more) != 1 || string(more[0].Body) != "m2" {
		t.Fatalf("second receive = %v, %v", more, err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: q, Token: more[0].LockToken}); err != nil {
		t.Fatal(err)
	}
	if c.State() != StateConnected {
		t.Fatalf("State = %q", c.State())
	}
}

func TestRabbitConfiguredEntitiesAndMissingQueue(t *testing.T) {
	c := dialRabbit(t, "configured-a", "/amq/queue/configured-b")
	ctx := context.Background()
	ents, err := c.Entities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range ents {
		paths = append(paths, e.Path)
	}
	if !reflect.DeepEqual(paths, []string{"configured-a", "/amq/queue/configured-b"}) {
		t.Fatalf("entities = %q", paths)
	}
	_, err = c.Receive(ctx, broker.ReceiveRequest{Entity: "peeklock-missing-" + uuid.NewString()[:8], Mode: broker.PeekLock, Max: 1})
	if !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("receive from a missing queue = %v, want not found", err)
	}
	// And the connection is still fine.
	q := rabbitQueue(t, c, 1)
	n, err := c.Purge(ctx, q, broker.SubQueueMain)
	if err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want 1", n, err)
	}
}

// TestRabbitLateMessageIsNotSwallowed: a lock of three that finds one
// leaves credit on the link; a message sent afterwards arrives on it, and
// must be given back at once (released), not held unseen until the link
// closes. Another receiver gets it.
func TestRabbitLateMessageIsNotSwallowed(t *testing.T) {
	c := dialRabbit(t)
	ctx := context.Background()
	q := rabbitQueue(t, c, 1)
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: q, Mode: broker.PeekLock, Max: 3, MaxWait: 500 * time.Millisecond})
	if err != nil || len(got) != 1 {
		t.Fatalf("Receive = %d messages, %v; want the one there is", len(got), err)
	}
	late := &broker.Message{MessageID: "late", ContentType: "text/plain", Body: []byte("late")}
	if err := c.Send(ctx, q, []*broker.Message{late}); err != nil {
		t.Fatal(err)
	}
	// The first lock is still held (its link stays open); the late
	// message must be available to another receive all the same.
	var again []*broker.Message
	deadline := time.Now().Add(10 * time.Second)
	for len(again) == 0 && time.Now().Before(deadline) {
		again, err = c.Receive(ctx, broker.ReceiveRequest{Entity: q, Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
		if err != nil {
			t.Fatalf("second Receive: %v", err)
		}
	}
	if len(again) != 1 || string(again[0].Body) != "late" {
		t.Fatalf("the late message was swallowed: second receive got %d messages", len(again))
	}
	for _, m := range append(got, again...) {
		if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: q, Token: m.LockToken}); err != nil {
			t.Fatalf("accept %s: %v", m.Body, err)
		}
	}
}
