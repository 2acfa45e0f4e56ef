package amqpserver

import (
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/entra"
	"github.com/peeklock/peeklock/broker/engine"
)

func TestPutTokenExpiry(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		in   any
		want time.Time
	}{
		{"1800000000", at},
		{" 1800000000 ", at},
		{int64(1_800_000_000), at},
		{uint64(1_800_000_000), at},
		{int64(1_800_000_000_000), at}, // milliseconds
		{float64(1_800_000_000_000), at},
		{at, at},
		{"0", time.Time{}},
		{"-5", time.Time{}},
		{"tomorrow", time.Time{}},
		{nil, time.Time{}},
	} {
		if got := putTokenExpiry(tc.in); !got.Equal(tc.want) {
			t.Errorf("putTokenExpiry(%#v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestCBSOpaqueEntraToken: with EntraID, a put-token of type jwt whose
// token is not a JWT (what a fake credential hands out) gets the default
// role until the expiration the request gives; its links are detached
// then, as with any token.
func TestCBSOpaqueEntraToken(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	clock := clockwork.NewFakeClockAt(t0)
	env := newEnv(t, engine.Options{Clock: clock}, Options{IdleTimeout: -1, EntraID: entra.NewValidator(entra.DefaultConfig(), clock)})
	env.queue("q", broker.EntitySettings{})
	env.queue("other", broker.EntitySettings{})
	s := env.anonymousSession()
	ctx := testCtx(t, 10*time.Second)
	cbs := newRPC(t, s, "$cbs")
	exp := t0.Add(20 * time.Minute)
	code, desc, _ := cbs.call(map[string]any{"operation": "put-token", "type": TokenTypeJWT, "name": "amqps://" + env.addr + "/q",
		"expiration": strconv.FormatInt(exp.Unix(), 10)}, "fake-entra-token")
	if code != 202 {
		t.Fatalf("put-token of an opaque jwt: %d %s", code, desc)
	}
	// The token covers the namespace, not only q.
	snd, err := s.NewSender(ctx, "q", nil)
	if err != nil {
		t.Fatalf("attach with the opaque token: %v", err)
	}
	if _, err := s.NewReceiver(ctx, "other", nil); err != nil {
		t.Fatalf("attach to another queue with the same token: %v", err)
	}
	clock.Advance(20 * time.Minute)
	var sendErr error
	waitFor(t, 5*time.Second, "the detach at the given expiration", func() bool {
		sendErr = snd.Send(testCtx(t, 2*time.Second), &amqp.Message{Data: [][]byte{[]byte("x")}}, nil)
		return sendErr != nil
	})
	if !strings.Contains(sendErr.Error(), "RenewToken") {
		t.Fatalf("send after the opaque token's expiration: %v", sendErr)
	}
}
