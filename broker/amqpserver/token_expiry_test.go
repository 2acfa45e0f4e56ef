package amqpserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

// TestTokenExpiryDetachesLinks: links attached with a token keep working
// while the client renews it on $cbs, and are detached as Service Bus
// detaches them once the token expires unrenewed: amqp:link:detach-forced,
// "Code: RenewToken", naming the claim the link needs.
func TestTokenExpiryDetachesLinks(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	clock := clockwork.NewFakeClockAt(t0)
	env := newEnv(t, engine.Options{Clock: clock}, Options{IdleTimeout: -1})
	env.queue("q", broker.EntitySettings{})
	s := env.anonymousSession()
	ctx := testCtx(t, 20*time.Second)
	cbs := newRPC(t, s, "$cbs")
	aud := "amqp://" + env.addr + "/q"
	if code, desc := putToken(cbs, aud, sas.Sign(aud, DefaultKeyName, DefaultKey, t0.Add(10*time.Minute))); code != 202 {
		t.Fatalf("put-token: %d %s", code, desc)
	}
	snd, err := s.NewSender(ctx, "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "q", &amqp.ReceiverOptions{Credit: 10})
	if err != nil {
		t.Fatal(err)
	}
	send := func(body string) error {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return snd.Send(sctx, &amqp.Message{Data: [][]byte{[]byte(body)}}, nil)
	}

	// Renewed before it expires: the links stay through the old expiry.
	clock.Advance(5 * time.Minute)
	if code, desc := putToken(cbs, aud, sas.Sign(aud, DefaultKeyName, DefaultKey, t0.Add(15*time.Minute))); code != 202 {
		t.Fatalf("renew: %d %s", code, desc)
	}
	clock.Advance(5*time.Minute + time.Second) // past the first token's expiry
	if err := send("still here"); err != nil {
		t.Fatalf("send after the first token's expiry, renewed: %v", err)
	}
	m, err := rcv.Receive(ctx, nil)
	if err != nil || string(m.GetData()) != "still here" {
		t.Fatalf("receive after the first token's expiry, renewed: %v, %v", m, err)
	}
	if err := rcv.AcceptMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	// Settled before the clock moves on: an expired lock would deliver the
	// message again.
	waitFor(t, 5*time.Second, "the completion", func() bool { return env.counts("q") == broker.Counts{} })

	// Not renewed: both links are detached at its expiry.
	clock.Advance(5 * time.Minute)
	_, err = rcv.Receive(ctx, nil)
	checkDetachForced(t, "receiver", err, "'Listen' claim(s) are required", "/q")
	var sendErr error
	waitFor(t, 5*time.Second, "the sender's detach", func() bool {
		sendErr = send("too late")
		return sendErr != nil
	})
	checkDetachForced(t, "sender", sendErr, "'Send' claim(s) are required", "/q")

	// A new token lets the client attach again.
	if code, desc := putToken(cbs, aud, sas.Sign(aud, DefaultKeyName, DefaultKey, clock.Now().Add(time.Hour))); code != 202 {
		t.Fatalf("put-token after expiry: %d %s", code, desc)
	}
	if _, err := s.NewSender(ctx, "q", nil); err != nil {
		t.Fatalf("attach with a new token: %v", err)
	}
}

func checkDetachForced(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	var le *amqp.LinkError
	if !errors.As(err, &le) || le.RemoteErr == nil {
		t.Fatalf("%s: %v, want a detach from the listener", what, err)
	}
	if le.RemoteErr.Condition != amqp.ErrCondDetachForced {
		t.Errorf("%s: condition %s, want %s", what, le.RemoteErr.Condition, amqp.ErrCondDetachForced)
	}
	for _, p := range append([]string{"is force detached. Code: RenewToken. Details: Unauthorized access.", "TrackingId:"}, parts...) {
		if !strings.Contains(le.RemoteErr.Description, p) {
			t.Errorf("%s: description %q lacks %q", what, le.RemoteErr.Description, p)
		}
	}
}

// TestTokenExpiryKeepsConnectionWideAccess: a connection authorized by
// SASL PLAIN has no token to expire; its links stay.
func TestTokenExpiryKeepsConnectionWideAccess(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	env := newEnv(t, engine.Options{Clock: clock}, Options{IdleTimeout: -1})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 10*time.Second)
	conn, err := amqp.Dial(ctx, "amqp://"+env.addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(DefaultKeyName, DefaultKey)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(48 * time.Hour)
	if err := snd.Send(ctx, &amqp.Message{Data: [][]byte{[]byte("x")}}, nil); err != nil {
		t.Fatalf("send two days later: %v", err)
	}
}
