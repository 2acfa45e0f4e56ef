package remote

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
)

func TestServeSendBrowseReceiveComplete(t *testing.T) {
	env := newServe(t, nil)
	env.queue("orders", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()

	if got := c.State(); got != StateConnected {
		t.Fatalf("State = %q, want connected", got)
	}
	if err := c.Send(ctx, "orders", textMessages(5)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	ents, err := c.Entities(ctx)
	if err != nil {
		t.Fatalf("Entities: %v", err)
	}
	if len(ents) != 1 || ents[0].Path != "orders" || ents[0].Kind != broker.KindQueue {
		t.Fatalf("Entities = %+v", ents)
	}
	if want := (broker.Counts{Active: 5}); ents[0].Counts.Active != want.Active || ents[0].Counts.Locked != 0 || ents[0].Counts.Deferred != 0 {
		t.Fatalf("counts = %+v, want 5 active", ents[0].Counts)
	}
	if ents[0].Settings.LockDuration != broker.DefaultLockDuration || ents[0].Settings.MaxDeliveryCount != 10 {
		t.Fatalf("settings = %+v", ents[0].Settings)
	}

	page, err := c.Browse(ctx, broker.BrowseRequest{Entity: "orders", Category: broker.CategoryActive, FromSequence: 2, Max: 3})
	if err != nil {
		t.Fatalf("Browse: %v", err)
	}
	if got := seqs(page); !reflect.DeepEqual(got, []int64{2, 3, 4}) {
		t.Fatalf("Browse seqs = %v, want [2 3 4]", got)
	}
	if string(page[0].Body) != "m2" || page[0].MessageID != "id2" || page[0].ContentType != "text/plain" || page[0].Locked() || page[0].DeliveryCount != 1 {
		t.Fatalf("browsed message = %+v", page[0])
	}

	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 2, MaxWait: time.Second})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if !reflect.DeepEqual(seqs(got), []int64{1, 2}) {
		t.Fatalf("Receive seqs = %v, want [1 2]", seqs(got))
	}
	for _, m := range got {
		if !m.Locked() || m.LockedUntil.IsZero() || m.DeliveryCount != 1 {
			t.Fatalf("received message not locked right: token %v until %v count %d", m.LockToken, m.LockedUntil, m.DeliveryCount)
		}
	}
	locked, err := c.Browse(ctx, broker.BrowseRequest{Entity: "orders", Category: broker.CategoryLocked, Max: 10})
	if err != nil || !reflect.DeepEqual(seqs(locked), []int64{1, 2}) {
		t.Fatalf("Browse Locked = %v, %v; want [1 2]", seqs(locked), err)
	}
	active, err := c.Browse(ctx, broker.BrowseRequest{Entity: "orders", Category: broker.CategoryActive, Max: 10})
	if err != nil || !reflect.DeepEqual(seqs(active), []int64{3, 4, 5}) {
		t.Fatalf("Browse Active = %v, %v; want [3 4 5]", seqs(active), err)
	}
	ents, _ = c.Entities(ctx)
	if ents[0].Counts.Active != 3 || ents[0].Counts.Locked != 2 {
		t.Fatalf("counts after receive = %+v, want 3 active 2 locked", ents[0].Counts)
	}

	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: got[0].LockToken}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	err = c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "orders", Token: got[0].LockToken})
	if !errors.Is(err, broker.ErrLockLost) {
		t.Fatalf("second Complete = %v, want lock lost", err)
	}
	if broker.TrackingIDOf(err) == "" || strings.Contains(err.Error(), "SystemTracker") {
		t.Fatalf("second Complete error %q: want a tracking id, without the tracker noise", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Abandon, Entity: "orders", Token: got[1].LockToken}); err != nil {
		t.Fatalf("Abandon: %v", err)
	}
	again, err := c.Browse(ctx, broker.BrowseRequest{Entity: "orders", Category: broker.CategoryActive, Max: 10})
	if err != nil || !reflect.DeepEqual(seqs(again), []int64{2, 3, 4, 5}) {
		t.Fatalf("Browse after settle = %v, %v; want [2 3 4 5]", seqs(again), err)
	}
	// The same numbers the official SDK shows: failed deliveries + 1.
	if again[0].DeliveryCount != 2 || again[1].DeliveryCount != 1 {
		t.Fatalf("DeliveryCount of the abandoned message = %d (want 2: one failure), of a fresh one %d (want 1)", again[0].DeliveryCount, again[1].DeliveryCount)
	}
	// Size is defined once: the remote view shows what the engine counts.
	local, err := env.eng.Browse(ctx, broker.BrowseRequest{Entity: "orders", Category: broker.CategoryActive, Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range local {
		if local[i].Size != again[i].Size || local[i].DeliveryCount != again[i].DeliveryCount {
			t.Fatalf("seq %d: embedded Size %d DC %d, remote Size %d DC %d", local[i].SequenceNumber, local[i].Size, local[i].DeliveryCount, again[i].Size, again[i].DeliveryCount)
		}
	}
	if n := env.eng; n == nil {
		t.Fatal("no engine")
	}
}

func TestServeDeadLetterDeferRenew(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()
	if err := c.Send(ctx, "q", textMessages(3)); err != nil {
		t.Fatal(err)
	}
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 3, MaxWait: time.Second})
	if err != nil || len(got) != 3 {
		t.Fatalf("Receive = %d, %v", len(got), err)
	}
	// Renew: the new expiry is later than the first.
	until, err := c.RenewLock(ctx, "q", got[0].LockToken)
	if err != nil {
		t.Fatalf("RenewLock: %v", err)
	}
	if until.Before(got[0].LockedUntil) {
		t.Fatalf("renewed until %v, before the first expiry %v", until, got[0].LockedUntil)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "q", Token: got[0].LockToken,
		Reason: "Broken", Description: "cannot parse", PropertiesToModify: map[string]any{"fixedBy": "test"}}); err != nil {
		t.Fatalf("DeadLetter: %v", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Defer, Entity: "q", Token: got[1].LockToken}); err != nil {
		t.Fatalf("Defer: %v", err)
	}
	dlq, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, Max: 10})
	if err != nil || len(dlq) != 1 {
		t.Fatalf("Browse DLQ = %d, %v", len(dlq), err)
	}
	if dlq[0].DeadLetterReason() != "Broken" || dlq[0].DeadLetterErrorDescription() != "cannot parse" || dlq[0].ApplicationProperties["fixedBy"] != "test" || dlq[0].SequenceNumber != 1 {
		t.Fatalf("dead-lettered = seq %d props %v", dlq[0].SequenceNumber, dlq[0].ApplicationProperties)
	}
	// The same window through the sub-queue's own address.
	dlq2, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q" + broker.DeadLetterSuffix, Category: broker.CategoryActive, Max: 10})
	if err != nil || !reflect.DeepEqual(seqs(dlq2), []int64{1}) {
		t.Fatalf("Browse q/$DeadLetterQueue = %v, %v", seqs(dlq2), err)
	}
	def, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeferred, Max: 10})
	if err != nil || !reflect.DeepEqual(seqs(def), []int64{2}) || def[0].State != broker.StateDeferred {
		t.Fatalf("Browse Deferred = %v, %v", seqs(def), err)
	}
	ents, err := c.Entities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (broker.Counts{Locked: 1, Deferred: 1, DeadLettered: 1}); ents[0].Counts.Active != 0 || ents[0].Counts.Locked != want.Locked ||
		ents[0].Counts.Deferred != want.Deferred || ents[0].Counts.DeadLettered != want.DeadLettered {
		t.Fatalf("counts = %+v, want %+v", ents[0].Counts, want)
	}
	// Receive the deferred message by sequence number and complete it
	// through update-disposition.
	dm, err := c.ReceiveDeferred(ctx, "q", []int64{2})
	if err != nil || len(dm) != 1 || !dm[0].Locked() || dm[0].State != broker.StateDeferred {
		t.Fatalf("ReceiveDeferred = %+v, %v", dm, err)
	}
	if _, err := c.RenewLock(ctx, "q", dm[0].LockToken); err != nil {
		t.Fatalf("RenewLock deferred: %v", err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "q", Token: dm[0].LockToken}); err != nil {
		t.Fatalf("Complete deferred: %v", err)
	}
	if _, err := c.ReceiveDeferred(ctx, "q", []int64{2}); !errors.Is(err, broker.ErrMessageNotFound) {
		t.Fatalf("ReceiveDeferred of a completed message = %v, want message not found", err)
	}
	// A lock this client never held: the endpoint answers lock lost.
	err = c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "q", Token: broker.LockToken(uuid.New())})
	if !errors.Is(err, broker.ErrLockLost) {
		t.Fatalf("settling an unknown token = %v, want lock lost", err)
	}
	// Renewing a lock that is gone.
	if _, err := c.RenewLock(ctx, "q", got[0].LockToken); !errors.Is(err, broker.ErrLockLost) {
		t.Fatalf("RenewLock of a settled lock = %v, want lock lost", err)
	}
	// Receive from the dead-letter sub-queue and complete there.
	dl, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", SubQueue: broker.SubQueueDeadLetter, Mode: broker.PeekLock, Max: 5, MaxWait: time.Second})
	if err != nil || len(dl) != 1 || dl[0].SequenceNumber != 1 {
		t.Fatalf("Receive DLQ = %v, %v", seqs(dl), err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "q" + broker.DeadLetterSuffix, Token: dl[0].LockToken}); err != nil {
		t.Fatalf("Complete in DLQ: %v", err)
	}
}

func TestServeScheduleCancelPurge(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()
	at := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	ids, err := c.Schedule(ctx, "q", at, textMessages(3))
	if err != nil || !reflect.DeepEqual(ids, []int64{1, 2, 3}) {
		t.Fatalf("Schedule = %v, %v", ids, err)
	}
	sch, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryScheduled, Max: 10})
	if err != nil || len(sch) != 3 || !sch[0].ScheduledEnqueueTime.Equal(at) || sch[0].State != broker.StateScheduled {
		t.Fatalf("Browse Scheduled = %+v, %v", sch, err)
	}
	if err := c.CancelScheduled(ctx, "q", []int64{2}); err != nil {
		t.Fatalf("CancelScheduled: %v", err)
	}
	sch, _ = c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryScheduled, Max: 10})
	if !reflect.DeepEqual(seqs(sch), []int64{1, 3}) {
		t.Fatalf("after cancel = %v, want [1 3]", seqs(sch))
	}
	if err := c.Send(ctx, "q", textMessages(600)); err != nil {
		t.Fatal(err)
	}
	// One deferred message too.
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("Receive = %v, %v", got, err)
	}
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Defer, Entity: "q", Token: got[0].LockToken}); err != nil {
		t.Fatal(err)
	}
	n, err := c.Purge(ctx, "q", broker.SubQueueMain)
	if err != nil || n != 602 {
		t.Fatalf("Purge = %d, %v; want 602 (599 active, 2 scheduled, 1 deferred)", n, err)
	}
	ents, _ := c.Entities(ctx)
	if ents[0].Counts != (broker.Counts{}) {
		t.Fatalf("counts after purge = %+v, want zero", ents[0].Counts)
	}
}

func TestServeReceiveAndDeleteAndEmpty(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()
	// Empty, no wait: returns at once with nothing.
	start := time.Now()
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 5})
	if err != nil || len(got) != 0 {
		t.Fatalf("Receive on empty = %v, %v", got, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Receive without MaxWait took %v", d)
	}
	// Empty with a wait: waits about that long.
	start = time.Now()
	got, err = c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 5, MaxWait: 200 * time.Millisecond})
	if err != nil || len(got) != 0 {
		t.Fatalf("Receive with wait on empty = %v, %v", got, err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 3*time.Second {
		t.Fatalf("Receive with a 200ms wait took %v", d)
	}
	if err := c.Send(ctx, "q", textMessages(4)); err != nil {
		t.Fatal(err)
	}
	got, err = c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.ReceiveAndDelete, Max: 3, MaxWait: time.Second})
	if err != nil || !reflect.DeepEqual(seqs(got), []int64{1, 2, 3}) {
		t.Fatalf("receive-and-delete = %v, %v", seqs(got), err)
	}
	if got[0].Locked() || string(got[0].Body) != "m1" {
		t.Fatalf("receive-and-delete message = %+v", got[0])
	}
	// No credit was left over: the fourth is still there and unlocked.
	left, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 10})
	if err != nil || !reflect.DeepEqual(seqs(left), []int64{4}) {
		t.Fatalf("left = %v, %v", seqs(left), err)
	}
	ents, _ := c.Entities(ctx)
	if ents[0].Counts.Active != 1 || ents[0].Counts.Locked != 0 {
		t.Fatalf("counts = %+v", ents[0].Counts)
	}
}

func TestServeErrors(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{MaxMessageSizeInKilobytes: 1})
	c := env.dial(env.config(""))
	ctx := context.Background()
	_, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "missing", Mode: broker.PeekLock, Max: 1})
	if !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("receive from a missing queue = %v, want not found", err)
	}
	_, err = c.Browse(ctx, broker.BrowseRequest{Entity: "missing", Category: broker.CategoryActive, Max: 1})
	if !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("browse of a missing queue = %v, want not found", err)
	}
	err = c.Send(ctx, "q", []*broker.Message{{Body: []byte(strings.Repeat("x", 4096))}})
	if !errors.Is(err, broker.ErrMessageTooLarge) {
		t.Fatalf("send of a too-large message = %v, want message too large", err)
	}
	// The link survives: a good message goes through afterwards.
	if err := c.Send(ctx, "q", textMessages(1)); err != nil {
		t.Fatalf("send after a rejection: %v", err)
	}
	if _, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Max: 0}); broker.CodeOf(err) != broker.CodeInvalid {
		t.Fatalf("browse Max 0 = %v, want invalid", err)
	}
}

func TestServeWrongKey(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	cfg := env.config(";EntityPath=q")
	cfg.Conn.Key = "not-the-key"
	_, err := Dial(context.Background(), cfg)
	if !errors.Is(err, broker.ErrUnauthorized) {
		t.Fatalf("Dial with a wrong key = %v, want unauthorized", err)
	}
	if strings.Contains(err.Error(), "not-the-key") {
		t.Fatalf("error %q echoes the key", err)
	}
}
