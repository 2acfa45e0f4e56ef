package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
)

// TestServeReconnectKeepsLocks: a message lock outlives the connection it
// was taken on; after the reconnection the client settles it by lock token
// through the management node (backup settlement, as the SDKs do).
func TestServeReconnectKeepsLocks(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()
	if err := c.Send(ctx, "q", textMessages(2)); err != nil {
		t.Fatal(err)
	}
	got, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("Receive = %v, %v", got, err)
	}

	env.proxy.cut(true) // drop the connection and refuse new ones
	waitFor(t, 5*time.Second, "the reconnecting state", func() bool {
		return strings.HasPrefix(c.State(), "reconnecting (attempt ")
	})
	waitFor(t, 5*time.Second, "a second attempt", func() bool { return c.State() != "reconnecting (attempt 1)" })
	if ep := c.Endpoint(); !strings.Contains(ep, "(reconnecting (attempt ") {
		t.Fatalf("Endpoint = %q, want the reconnecting state in it", ep)
	}
	// While reconnecting the settlement fails at once, and the lock stays.
	start := time.Now()
	err = c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "q", Token: got[0].LockToken})
	if !errors.Is(err, broker.ErrConnectionLost) {
		t.Fatalf("settle while reconnecting = %v, want connection lost", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("settle while reconnecting took %v", d)
	}
	// Operations fail fast while reconnecting.
	_, err = c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 5})
	if !errors.Is(err, broker.ErrConnectionLost) || !strings.Contains(err.Error(), "reconnecting (attempt") {
		t.Fatalf("browse while reconnecting = %v", err)
	}
	if l, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryLocked, Max: 5}); err != nil || !reflect.DeepEqual(seqs(l), []int64{1}) {
		t.Fatalf("Locked while reconnecting = %v, %v; want [1] (the lock is kept)", seqs(l), err)
	}

	env.proxy.up()
	waitFor(t, 5*time.Second, "reconnection", func() bool { return c.State() == StateConnected })
	// The broker kept the lock: the client authorizes again on the new
	// connection and completes it through the management node.
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "q", Token: got[0].LockToken}); err != nil {
		t.Fatalf("backup settlement after reconnect: %v", err)
	}
	page, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 5})
	if err != nil || !reflect.DeepEqual(seqs(page), []int64{2}) {
		t.Fatalf("Browse after reconnect = %v, %v; want [2]", seqs(page), err)
	}
	again, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 2, MaxWait: time.Second})
	if err != nil || len(again) != 1 {
		t.Fatalf("Receive after reconnect = %v, %v", seqs(again), err)
	}
	for _, m := range again {
		if err := c.Settle(ctx, broker.Settlement{Kind: broker.Complete, Entity: "q", Token: m.LockToken}); err != nil {
			t.Fatalf("Complete after reconnect: %v", err)
		}
	}
}

func TestServeTokenRefresh(t *testing.T) {
	start := time.Now().Truncate(time.Second)
	clock := clockwork.NewFakeClockAt(start)
	env := newServe(t, clock)
	env.queue("q", broker.EntitySettings{})
	cfg := env.config("")
	cfg.Clock = clock
	cfg.TokenLifetime = 100 * time.Second // renewed at 80 s
	c := env.dial(cfg)
	ctx := context.Background()
	if err := c.Send(ctx, "q", textMessages(1)); err != nil {
		t.Fatal(err)
	}
	aud := "sb://" + cfg.Conn.Host + "/q"
	if n := env.puts.count(aud); n != 1 {
		t.Fatalf("put-tokens for %s = %d, want 1", aud, n)
	}
	// Advance only once the refresh loop waits for this token's renewal:
	// an advance before its timer is armed would move the renewal too.
	waitFor(t, 5*time.Second, "the refresh loop to wait for 80 s", func() bool {
		return c.nextRefresh.Load() == start.Add(80*time.Second).UnixNano()
	})
	clock.Advance(79 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := env.puts.count(aud); n != 1 {
		t.Fatalf("put-tokens before the renewal time = %d, want 1", n)
	}
	clock.Advance(2 * time.Second)
	waitFor(t, 5*time.Second, "the second put-token", func() bool { return env.puts.count(aud) == 2 })
	// Past the first token's expiry (100 s) the client still works, on
	// the second token (renewed at 81 s, due again at 161 s).
	clock.Advance(30 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := env.puts.count(aud); n != 2 {
		t.Fatalf("put-tokens at 111 s = %d, want 2", n)
	}
	if err := c.Send(ctx, "q", textMessages(1)); err != nil {
		t.Fatalf("send after the first token expired: %v", err)
	}
}

func TestServeTokenRefreshRealClock(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	cfg := env.config("")
	cfg.TokenLifetime = 3 * time.Second // renewed after 2.4 s
	c := env.dial(cfg)
	if err := c.Send(context.Background(), "q", textMessages(1)); err != nil {
		t.Fatal(err)
	}
	aud := "sb://" + cfg.Conn.Host + "/q"
	waitFor(t, 6*time.Second, "a renewed token", func() bool { return env.puts.count(aud) >= 2 })
	time.Sleep(1200 * time.Millisecond) // past the first token's expiry
	if err := c.Send(context.Background(), "q", textMessages(1)); err != nil {
		t.Fatalf("send after the first token expired: %v", err)
	}
}

// failingComplete wraps a client so that the first Complete fails, as if
// the connection dropped between the resubmit's send and its complete.
type failingComplete struct {
	*Client
	failed bool
}

func (f *failingComplete) Settle(ctx context.Context, s broker.Settlement) error {
	if s.Kind == broker.Complete && !f.failed {
		f.failed = true
		return &broker.Error{Code: broker.CodeConnectionLost, Message: "injected failure"}
	}
	return f.Client.Settle(ctx, s)
}

func TestServeResubmitFailureLeavesDuplicateNotGap(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()
	if err := c.Send(ctx, "q", []*broker.Message{{MessageID: "order-7", Body: []byte(`{"n":7}`), ContentType: "application/json"}}); err != nil {
		t.Fatal(err)
	}
	got, _ := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	if err := c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "q", Token: got[0].LockToken, Reason: "r"}); err != nil {
		t.Fatal(err)
	}
	dlq := "q" + broker.DeadLetterSuffix
	dl, err := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", SubQueue: broker.SubQueueDeadLetter, Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	if err != nil || len(dl) != 1 {
		t.Fatalf("Receive DLQ = %v, %v", dl, err)
	}
	f := &failingComplete{Client: c}
	err = broker.Resubmit(ctx, f, dlq, dl[0], broker.ResubmitTarget(dlq))
	if err == nil || !strings.Contains(err.Error(), "it is there twice") {
		t.Fatalf("Resubmit = %v, want the duplicate report", err)
	}
	main, _ := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 10})
	dead, _ := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, Max: 10})
	if len(main) != 1 || main[0].MessageID != "order-7" || main[0].DeadLetterReason() != "" {
		t.Fatalf("main queue = %+v, want the resubmitted copy", main)
	}
	if len(dead) != 1 || dead[0].MessageID != "order-7" {
		t.Fatalf("dead-letter queue = %+v, want the original still there", dead)
	}
	// The original is still locked by this client (the complete never
	// reached the endpoint): a second resubmit completes it.
	if err := broker.Resubmit(ctx, f, dlq, dl[0], "q"); err != nil {
		t.Fatalf("second Resubmit: %v", err)
	}
	dead, _ = c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryDeadLettered, Max: 10})
	main, _ = c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 10})
	if len(dead) != 0 || len(main) != 2 {
		t.Fatalf("after the second resubmit: %d dead-lettered, %d active; want 0 and 2", len(dead), len(main))
	}
}

func TestServeNoManageRightsFallsBack(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	var hits atomic.Int64
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `<Error><Code>401</Code><Detail>Manage,EntityRead claims required for this operation. TrackingId:abc_G1, SystemTracker:x, Timestamp:2025-01-01T00:00:00</Detail></Error>`)
	}))
	defer denied.Close()
	cfg := env.config(";EntityPath=q")
	cfg.AdminURL = denied.URL
	cfg.Entities = []string{"other"}
	c := env.dial(cfg)
	ctx := context.Background()
	if err := c.Send(ctx, "q", textMessages(2)); err != nil {
		t.Fatal(err)
	}
	got, _ := c.Receive(ctx, broker.ReceiveRequest{Entity: "q", Mode: broker.PeekLock, Max: 1, MaxWait: time.Second})
	ents, err := c.Entities(ctx)
	if err != nil {
		t.Fatalf("Entities: %v", err)
	}
	want := []broker.Entity{{Path: "q", Counts: broker.Counts{Locked: 1, Unknown: true}}, {Path: "other", Counts: broker.Counts{Unknown: true}}}
	if !reflect.DeepEqual(ents, want) {
		t.Fatalf("Entities = %+v, want %+v", ents, want)
	}
	if n := c.Notice(); n != "counts unavailable: the credential may not list entities (it lacks Manage rights)" {
		t.Fatalf("Notice = %q", n)
	}
	// The refusal is remembered: the next list falls back the same way
	// without asking again.
	again, err := c.Entities(ctx)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("second Entities = %+v, %v", again, err)
	}
	if asked := hits.Load(); asked != 1 {
		t.Fatalf("the admin API was asked %d times, want 1", asked)
	}
	if ep := c.Endpoint(); !strings.Contains(ep, "lacks Manage rights") {
		t.Fatalf("Endpoint = %q, want the notice", ep)
	}
	if len(got) != 1 {
		t.Fatal("no message received")
	}
}

func TestServePropertiesRoundTrip(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	c := env.dial(env.config(""))
	ctx := context.Background()
	sent := &broker.Message{
		MessageID: "m-1", ContentType: "application/json", CorrelationID: "c-1", Subject: "subj", To: "dest",
		ReplyTo: "replies", ReplyToSessionID: "rs", PartitionKey: "pk", TimeToLive: time.Hour,
		ApplicationProperties: map[string]any{"s": "x", "i": int64(-5), "b": true, "f": 1.5, "u": uint32(7),
			"t": time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), "d": 1500 * time.Millisecond, "bin": []byte{1, 2}},
		Body: []byte(`{"a":1}`),
	}
	if err := c.Send(ctx, "q", []*broker.Message{sent}); err != nil {
		t.Fatal(err)
	}
	page, err := c.Browse(ctx, broker.BrowseRequest{Entity: "q", Category: broker.CategoryActive, Max: 1})
	if err != nil || len(page) != 1 {
		t.Fatalf("Browse = %v, %v", page, err)
	}
	m := page[0]
	if m.MessageID != "m-1" || m.ContentType != "application/json" || m.CorrelationID != "c-1" || m.Subject != "subj" ||
		m.To != "dest" || m.ReplyTo != "replies" || m.ReplyToSessionID != "rs" || m.PartitionKey != "pk" ||
		m.TimeToLive != time.Hour || string(m.Body) != `{"a":1}` || m.BodyKind != broker.BodyData {
		t.Fatalf("browsed = %+v", m)
	}
	if m.SequenceNumber != 1 || m.EnqueuedTime.IsZero() || !m.ExpiresAt.Equal(m.EnqueuedTime.Add(time.Hour)) || m.Size == 0 {
		t.Fatalf("broker properties: seq %d enqueued %v expires %v size %d", m.SequenceNumber, m.EnqueuedTime, m.ExpiresAt, m.Size)
	}
	wantProps := map[string]any{"s": "x", "i": int64(-5), "b": true, "f": 1.5, "u": uint32(7),
		"t": time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), "d": int64(1500), "bin": []byte{1, 2}}
	if !reflect.DeepEqual(m.ApplicationProperties, wantProps) {
		t.Fatalf("properties = %#v\nwant %#v", m.ApplicationProperties, wantProps)
	}
}

// fakeCredential is an azcore.TokenCredential that hands out testJWT.
type fakeCredential struct{ calls atomic.Int64 }

func (f *fakeCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	f.calls.Add(1)
	return azcore.AccessToken{Token: testJWT, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestServeEntraCredential(t *testing.T) {
	env := newServe(t, nil)
	env.queue("q", broker.EntitySettings{})
	cs, err := FromNamespace(env.proxy.addr())
	if err != nil {
		t.Fatal(err)
	}
	cs.TLS = false // the test listener is plain TCP
	cred := &fakeCredential{}
	c := env.dial(Config{Conn: cs, Credential: cred, AdminURL: env.adminURL, Entities: []string{"q"}, Timeout: 5 * time.Second})
	ctx := context.Background()
	if err := c.Send(ctx, "q", textMessages(1)); err != nil {
		t.Fatalf("Send with an Entra ID token: %v", err)
	}
	if n := env.puts.count("jwt"); n != 1 {
		t.Fatalf("jwt put-tokens = %d, want 1", n)
	}
	// The admin API of peeklock serve takes SAS only: the list falls back
	// to the configured entity and says why.
	ents, err := c.Entities(ctx)
	if err != nil || len(ents) != 1 || ents[0].Path != "q" {
		t.Fatalf("Entities = %+v, %v", ents, err)
	}
	if !strings.Contains(c.Notice(), "counts unavailable") {
		t.Fatalf("Notice = %q", c.Notice())
	}
	if ep := c.Endpoint(); !strings.HasPrefix(ep, "Azure Service Bus 127.0.0.1 (connected)") {
		t.Fatalf("Endpoint = %q", ep)
	}
}

func TestServeManyEntitiesStayUnderSessionLimit(t *testing.T) {
	env := newServe(t, nil)
	const n = 150 // two management nodes each: 300 links, past the listener's 256 sessions
	for i := 0; i < n; i++ {
		env.queue(fmt.Sprintf("q%03d", i), broker.EntitySettings{})
	}
	c := env.dial(env.config(""))
	ctx := context.Background()
	for round := 0; round < 2; round++ {
		for i := 0; i < n; i++ {
			q := fmt.Sprintf("q%03d", i)
			for _, cat := range []broker.Category{broker.CategoryActive, broker.CategoryDeadLettered} {
				if _, err := c.Browse(ctx, broker.BrowseRequest{Entity: q, Category: cat, Max: 5}); err != nil {
					t.Fatalf("round %d: Browse %s %s: %v", round, q, cat, err)
				}
			}
		}
	}
	cn := c.currentConn()
	cn.mu.Lock()
	links := len(cn.links)
	cn.mu.Unlock()
	if links > maxCachedLinks {
		t.Fatalf("%d links cached, want at most %d", links, maxCachedLinks)
	}
}
