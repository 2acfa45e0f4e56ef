package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// fixture is an engine on a fake clock behind an httptest TLS server (the
// SDK's admin client always speaks https to the connection string's host
// and port; it only has to trust the test server's certificate). The fake
// clock starts at the real time (the SDK signs its tokens with the real
// clock, valid for two hours).
type fixture struct {
	t     *testing.T
	ctx   context.Context
	clock *clockwork.FakeClock
	eng   *engine.Engine
	srv   *httptest.Server
	host  string // 127.0.0.1:port
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clock := clockwork.NewFakeClockAt(time.Now().Truncate(time.Second))
	eng, err := engine.New(engine.Options{Clock: clock})
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	srv := httptest.NewTLSServer(NewHandler(eng, Options{}))
	t.Cleanup(func() {
		srv.Close()
		if err := eng.Close(); err != nil {
			t.Errorf("close the engine: %v", err)
		}
	})
	u, _ := url.Parse(srv.URL)
	return &fixture{t: t, ctx: context.Background(), clock: clock, eng: eng, srv: srv, host: u.Host}
}

// trusting returns an HTTP client that trusts srv's certificate: the only
// thing the SDK's admin client needs to reach it. No URL is rewritten.
func trusting(srv *httptest.Server) *http.Client {
	c := srv.Client()
	c.Timeout = 30 * time.Second
	return c
}

// client returns the official SDK's admin client for the fixture, signing
// with key.
func (f *fixture) client(key string) *sbadmin.Client {
	f.t.Helper()
	cs := "Endpoint=sb://" + f.host + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + key + ";UseDevelopmentEmulator=true"
	c, err := sbadmin.NewClientFromConnectionString(cs, &sbadmin.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: trusting(f.srv),
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		f.t.Fatalf("NewClientFromConnectionString: %v", err)
	}
	return c
}

// sdk returns a client with the right key.
func (f *fixture) sdk() *sbadmin.Client { return f.client("SAS_KEY_VALUE") }

// statusOfErr returns the HTTP status of an SDK error, or 0.
func statusOfErr(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// create creates entities through the engine.
func (f *fixture) create(ents ...broker.Entity) {
	f.t.Helper()
	for _, e := range ents {
		if err := f.eng.CreateEntity(f.ctx, e); err != nil {
			f.t.Fatalf("CreateEntity %s: %v", e.Path, err)
		}
	}
}

// send sends n messages with ids prefix-0... to an entity.
func (f *fixture) send(entity string, n int) {
	f.t.Helper()
	msgs := make([]*broker.Message, n)
	for i := range msgs {
		msgs[i] = &broker.Message{MessageID: entity + "-" + string(rune('a'+i)), Body: []byte("hello")}
	}
	if err := f.eng.Send(f.ctx, entity, msgs); err != nil {
		f.t.Fatalf("Send %s: %v", entity, err)
	}
}

// receive peek-locks n messages.
func (f *fixture) receive(entity string, n int) []*broker.Message {
	f.t.Helper()
	got, err := f.eng.Receive(f.ctx, broker.ReceiveRequest{Entity: entity, Mode: broker.PeekLock, Max: n})
	if err != nil || len(got) != n {
		f.t.Fatalf("Receive %s: %d messages, %v; want %d", entity, len(got), err, n)
	}
	return got
}

func (f *fixture) settle(kind broker.SettleKind, entity string, m *broker.Message) {
	f.t.Helper()
	if err := f.eng.Settle(f.ctx, broker.Settlement{Kind: kind, Entity: entity, Token: m.LockToken, Reason: "bad"}); err != nil {
		f.t.Fatalf("Settle %v: %v", kind, err)
	}
}

func ptr[T any](v T) *T { return &v }

// dump shows a struct of pointers readably.
func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
