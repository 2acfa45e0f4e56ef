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

// TestSDKSQLRuleParameters: the official SDK creates a rule whose SQL filter
// and action have parameters of every type it sends, reads them back equal,
// and a message sent with the official SDK is selected and changed by them;
// a parameter without a value refuses the rule with 400 and its position.
func TestSDKSQLRuleParameters(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	f.create(broker.Entity{Path: "t", Kind: broker.KindTopic})
	ac := f.sdk()
	if _, err := ac.CreateSubscription(ctx, "t", "s", nil); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	since := time.Date(2001, 1, 1, 1, 2, 3, 0, time.UTC)
	filter := &sbadmin.SQLFilter{Expression: "quantity > @min AND region LIKE @region AND express = @express",
		Parameters: map[string]any{"@min": int64(10), "@region": "eu-%", "@express": true, "@since": since, "@ratio": 1.25}}
	action := &sbadmin.SQLAction{Expression: "SET tier = @tier, SET score = quantity * @ratio; SET sys.To = @to",
		Parameters: map[string]any{"@tier": "gold", "@ratio": 2.5, "@to": "fulfilment"}}
	if _, err := ac.CreateRule(ctx, "t", "s", &sbadmin.CreateRuleOptions{Name: ptr("p"), Filter: filter, Action: action}); err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	if _, err := ac.DeleteRule(ctx, "t", "s", "$Default", nil); err != nil {
		t.Fatalf("DeleteRule $Default: %v", err)
	}

	ent, _ := f.eng.Entity(ctx, "t/Subscriptions/s")
	want := []broker.Rule{{Name: "p", SQL: filter.Expression, Parameters: filter.Parameters, Action: action.Expression, ActionParameters: action.Parameters}}
	for i := range ent.Rules {
		ent.Rules[i].CreatedAt = time.Time{}
	}
	if !reflect.DeepEqual(ent.Rules, want) {
		t.Fatalf("engine rules %s, want %s", dump(ent.Rules), dump(want))
	}
	got, err := ac.GetRule(ctx, "t", "s", "p", nil)
	if err != nil || !reflect.DeepEqual(got.Filter, filter) || !reflect.DeepEqual(got.Action, action) {
		t.Fatalf("GetRule: %v %s", err, dump(got))
	}
	pager := ac.NewListRulesPager("t", "s", nil)
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Rules) != 1 || !reflect.DeepEqual(page.Rules[0].Filter, filter) || !reflect.DeepEqual(page.Rules[0].Action, action) {
		t.Fatalf("ListRules: %v %s", err, dump(page.Rules))
	}

	for _, c := range []struct {
		name            string
		filter, action  string
		params, aparams map[string]any
		want            string
	}{
		{"missing", "a = @a OR b = @b", "", map[string]any{"@a": 1}, nil,
			`rule "missing": SQL filter "a = @a OR b = @b": at position 15: the parameter @b has no value; give it one in the parameters`},
		{"missing-action", "a = 1", "SET a = @x", nil, map[string]any{"@y": "v"},
			`rule "missing-action": SQL action "SET a = @x": at position 9: the parameter @x has no value; give it one in the parameters`},
		{"no-at", "a = @a", "", map[string]any{"a": 1}, nil,
			`rule "no-at": SQL filter parameter "a": a parameter's name is @ followed by letters, digits and _, as in @p1`},
	} {
		opts := &sbadmin.CreateRuleOptions{Name: ptr(c.name), Filter: &sbadmin.SQLFilter{Expression: c.filter, Parameters: c.params}}
		if c.action != "" {
			opts.Action = &sbadmin.SQLAction{Expression: c.action, Parameters: c.aparams}
		}
		_, err := ac.CreateRule(ctx, "t", "s", opts)
		// The SDK's error quotes the XML body as it came: quotes as written.
		if statusOfErr(err) != http.StatusBadRequest || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CreateRule %s: %v\nwant 400 with %s", c.name, err, c.want)
		}
	}

	snd, err := f.messaging().NewSender("t", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*azservicebus.Message{
		{MessageID: ptr("small"), ApplicationProperties: map[string]any{"quantity": int32(10), "region": "eu-west", "express": true}},
		{MessageID: ptr("us"), ApplicationProperties: map[string]any{"quantity": int32(50), "region": "us-east", "express": true}},
		{MessageID: ptr("slow"), ApplicationProperties: map[string]any{"quantity": int32(50), "region": "eu-west", "express": false}},
		{MessageID: ptr("match"), ApplicationProperties: map[string]any{"quantity": int32(50), "region": "eu-west", "express": true}},
	} {
		if err := snd.SendMessage(ctx, m, nil); err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
	}
	ent, _ = f.eng.Entity(ctx, "t/Subscriptions/s")
	if ent.Counts.Active != 1 {
		t.Fatalf("subscription counts %+v, want one message", ent.Counts)
	}
	rcv, err := f.messaging().NewReceiverForSubscription("t", "s", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := rcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(ms) != 1 {
		t.Fatalf("ReceiveMessages: %v %d", err, len(ms))
	}
	m := ms[0]
	if p := m.ApplicationProperties; m.MessageID != "match" || p["tier"] != "gold" || p["score"] != 125.0 || p["RuleName"] != "p" ||
		p["quantity"] != int32(50) || m.To == nil || *m.To != "fulfilment" {
		t.Fatalf("received %s", dump(m))
	}
}
