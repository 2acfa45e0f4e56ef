package admin

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/peeklock/peeklock/broker"
)

// TestSDKSQLRules: the official SDK creates rules with a SQLFilter, a
// SQLAction and a FalseFilter, reads them back, and a message sent with the
// official SDK arrives with the action's changes.
func TestSDKSQLRules(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	f.create(broker.Entity{Path: "t", Kind: broker.KindTopic})
	ac := f.sdk()
	if _, err := ac.CreateSubscription(ctx, "t", "s", &sbadmin.CreateSubscriptionOptions{Properties: &sbadmin.SubscriptionProperties{
		DefaultRule: &sbadmin.RuleProperties{Name: "big", Filter: &sbadmin.SQLFilter{Expression: "quantity > 10 AND sys.Label = 'order'"},
			Action: &sbadmin.SQLAction{Expression: "SET priority = 'high'; SET sys.To = 'fulfilment'"}},
	}}); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	if _, err := ac.CreateRule(ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("never"), Filter: &sbadmin.FalseFilter{}}); err != nil {
		t.Fatalf("CreateRule FalseFilter: %v", err)
	}
	if _, err := ac.CreateRule(ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("eu"),
		Filter: &sbadmin.SQLFilter{Expression: "region LIKE 'eu-%'"}}); err != nil {
		t.Fatalf("CreateRule SQLFilter: %v", err)
	}

	ent, _ := f.eng.Entity(ctx, "t/Subscriptions/s")
	want := []broker.Rule{
		{Name: "big", SQL: "quantity > 10 AND sys.Label = 'order'", Action: "SET priority = 'high'; SET sys.To = 'fulfilment'"},
		{Name: "never", SQL: "1=0"},
		{Name: "eu", SQL: "region LIKE 'eu-%'"},
	}
	for i := range ent.Rules {
		ent.Rules[i].CreatedAt = time.Time{}
	}
	if !reflect.DeepEqual(ent.Rules, want) {
		t.Fatalf("engine rules %s, want %s", dump(ent.Rules), dump(want))
	}
	got, err := ac.GetRule(ctx, "t", "s", "big", nil)
	if err != nil || !reflect.DeepEqual(got.Filter, &sbadmin.SQLFilter{Expression: "quantity > 10 AND sys.Label = 'order'"}) ||
		!reflect.DeepEqual(got.Action, &sbadmin.SQLAction{Expression: "SET priority = 'high'; SET sys.To = 'fulfilment'"}) {
		t.Fatalf("GetRule big: %v %s", err, dump(got))
	}
	got, err = ac.GetRule(ctx, "t", "s", "never", nil)
	if err != nil || !reflect.DeepEqual(got.Filter, &sbadmin.FalseFilter{}) || got.Action != nil {
		t.Fatalf("GetRule never: %v %s", err, dump(got))
	}
	// A malformed expression is refused with 400 and the position.
	_, err = ac.CreateRule(ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("bad"),
		Filter: &sbadmin.SQLFilter{Expression: "a = 1"}, Action: &sbadmin.SQLAction{Expression: "SET sys.SequenceNumber = 1"}})
	if statusOfErr(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "at position 5: SET: the system property is read-only") {
		t.Fatalf("CreateRule with a bad action: %v, want 400", err)
	}
	_, err = ac.CreateRule(ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("params"),
		Filter: &sbadmin.SQLFilter{Expression: "a = @p", Parameters: map[string]any{"@p": 1}}})
	if statusOfErr(err) == http.StatusOK || err == nil || !strings.Contains(err.Error(), "parameters (@name) are not supported") {
		t.Fatalf("CreateRule with parameters: %v", err)
	}

	mc := f.messaging()
	snd, err := mc.NewSender("t", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*azservicebus.Message{
		{MessageID: ptr("small"), Subject: ptr("order"), ApplicationProperties: map[string]any{"quantity": int32(2)}},
		{MessageID: ptr("big"), Subject: ptr("order"), ApplicationProperties: map[string]any{"quantity": int32(50)}},
		{MessageID: ptr("eu"), ApplicationProperties: map[string]any{"region": "eu-west"}},
	} {
		if err := snd.SendMessage(ctx, m, nil); err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
	}
	rcv, err := mc.NewReceiverForSubscription("t", "s", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if err != nil {
		t.Fatal(err)
	}
	var ms []*azservicebus.ReceivedMessage
	for len(ms) < 2 {
		got, err := rcv.ReceiveMessages(ctx, 2-len(ms), nil)
		if err != nil {
			t.Fatalf("ReceiveMessages: %v", err)
		}
		ms = append(ms, got...)
	}
	big, eu := ms[0], ms[1]
	if big.MessageID != "big" || big.ApplicationProperties["priority"] != "high" || big.ApplicationProperties["RuleName"] != "big" ||
		big.To == nil || *big.To != "fulfilment" || big.ApplicationProperties["quantity"] != int32(50) {
		t.Fatalf("big = %s", dump(big))
	}
	if eu.MessageID != "eu" || eu.ApplicationProperties["priority"] != nil || eu.To != nil {
		t.Fatalf("eu = %s", dump(eu))
	}
	ent, _ = f.eng.Entity(ctx, "t/Subscriptions/s")
	if ent.Counts != (broker.Counts{}) {
		t.Fatalf("left over: %+v", ent.Counts)
	}
}
