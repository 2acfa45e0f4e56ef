package admin

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
)

// messaging starts the AMQP listener in front of the fixture's engine and
// returns the official SDK's messaging client for it. The listener runs on
// the real clock (heartbeats, token expiry); the engine stays on the fake
// one, so no lock expires unless the test moves it.
func (f *fixture) messaging() *azservicebus.Client {
	f.t.Helper()
	srv, err := amqpserver.New(f.eng, amqpserver.Options{Clock: clockwork.NewRealClock()})
	if err != nil {
		f.t.Fatalf("amqpserver.New: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	cs := "Endpoint=sb://" + l.Addr().String() + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true"
	c, err := azservicebus.NewClientFromConnectionString(cs, &azservicebus.ClientOptions{
		RetryOptions: azservicebus.RetryOptions{MaxRetries: 1, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	// Cleanups run last-in first-out: the client closes before the
	// listener, which closes before the fixture's engine.
	f.t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	f.t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// TestSDKRuleChangesKeepLocks: with the official SDKs, messages received
// under peek-lock from a subscription can still be completed after a rule
// is created, replaced or deleted through the admin API; a settings update
// loses the lock, as in Service Bus.
func TestSDKRuleChangesKeepLocks(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	f.create(
		broker.Entity{Path: "t", Kind: broker.KindTopic},
		broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription, Rules: []broker.Rule{
			{Name: "red", Filter: &broker.CorrelationFilter{Subject: "red"}},
		}},
	)
	mc := f.messaging()
	ac := f.sdk()

	snd, err := mc.NewSender("t", nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x"), Subject: ptr("red")}, nil); err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
	}
	rcv, err := mc.NewReceiverForSubscription("t", "s", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModePeekLock})
	if err != nil {
		t.Fatal(err)
	}
	var locked []*azservicebus.ReceivedMessage
	for len(locked) < 4 {
		ms, err := rcv.ReceiveMessages(ctx, 4-len(locked), nil)
		if err != nil {
			t.Fatalf("ReceiveMessages: %v", err)
		}
		locked = append(locked, ms...)
	}
	complete := func(step string, m *azservicebus.ReceivedMessage) error {
		t.Helper()
		err := rcv.CompleteMessage(ctx, m, nil)
		t.Logf("complete after %s: %v", step, err)
		return err
	}

	blue := &sbadmin.CorrelationFilter{Subject: ptr("blue")}
	if _, err := ac.CreateRule(ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("blue"), Filter: blue}); err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	if err := complete("CreateRule", locked[0]); err != nil {
		t.Fatalf("CompleteMessage after CreateRule: %v", err)
	}
	if _, err := ac.UpdateRule(ctx, "t", "s", sbadmin.RuleProperties{Name: "blue", Filter: &sbadmin.CorrelationFilter{Subject: ptr("navy")}}); err != nil {
		t.Fatalf("UpdateRule: %v", err)
	}
	if err := complete("UpdateRule", locked[1]); err != nil {
		t.Fatalf("CompleteMessage after UpdateRule: %v", err)
	}
	if _, err := ac.DeleteRule(ctx, "t", "s", "red", nil); err != nil {
		t.Fatalf("DeleteRule: %v", err)
	}
	if err := complete("DeleteRule", locked[2]); err != nil {
		t.Fatalf("CompleteMessage after DeleteRule: %v", err)
	}
	ent, _ := f.eng.Entity(ctx, "t/Subscriptions/s")
	if ent.Counts.Locked != 1 || len(ent.Rules) != 1 || ent.Rules[0].Name != "blue" || ent.Rules[0].Filter.Subject != "navy" {
		t.Fatalf("subscription: counts %+v, rules %s", ent.Counts, dump(ent.Rules))
	}

	// A settings update is different: the last lock is lost.
	sp, err := ac.GetSubscription(ctx, "t", "s", nil)
	if err != nil {
		t.Fatalf("GetSubscription: %v", err)
	}
	sp.MaxDeliveryCount = ptr(int32(5))
	if _, err := ac.UpdateSubscription(ctx, "t", "s", sp.SubscriptionProperties, nil); err != nil {
		t.Fatalf("UpdateSubscription: %v", err)
	}
	var sbErr *azservicebus.Error
	if err := complete("UpdateSubscription", locked[3]); !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeLockLost {
		t.Fatalf("CompleteMessage after UpdateSubscription: %v, want lock lost", err)
	}
}
