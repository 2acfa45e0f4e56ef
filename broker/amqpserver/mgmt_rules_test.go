package amqpserver

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// described returns the descriptor and the list of a described list as
// go-amqp decodes it (its type is internal to go-amqp).
func described(t *testing.T, v any) (uint64, []any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct || !rv.FieldByName("Descriptor").IsValid() {
		t.Fatalf("%#v is not a described value", v)
	}
	code, ok := rv.FieldByName("Descriptor").Interface().(uint64)
	if !ok {
		t.Fatalf("descriptor of %#v is not a ulong", v)
	}
	list, _ := rv.FieldByName("Value").Interface().([]any)
	return code, list
}

// wireRule is a rule as enumerate-rules describes it.
type wireRule struct {
	name           string
	filter, action uint64
	filterFields   []any
	actionFields   []any
	created        time.Time
}

// enumerateRules asks node for a page of rules; nil for 204.
func enumerateRulesOf(t *testing.T, r *rpcClient, skip, top int32) []wireRule {
	t.Helper()
	code, desc, v := r.call(map[string]any{"operation": "com.microsoft:enumerate-rules"}, map[string]any{"skip": skip, "top": top})
	if code == 204 {
		return nil
	}
	if code != 200 {
		t.Fatalf("enumerate-rules: %d %s", code, desc)
	}
	body, _ := v.(map[string]any)
	list, ok := body["rules"].([]any)
	if !ok {
		t.Fatalf("enumerate-rules body %#v has no list of rules", v)
	}
	var out []wireRule
	for _, e := range list {
		m, _ := e.(map[string]any)
		code, fields := described(t, m["rule-description"])
		if code != 0x0000013700000004 || len(fields) != 4 {
			t.Fatalf("rule-description %#x %#v", code, fields)
		}
		var w wireRule
		w.filter, w.filterFields = described(t, fields[0])
		w.action, w.actionFields = described(t, fields[1])
		w.name, _ = fields[2].(string)
		w.created, _ = fields[3].(time.Time)
		out = append(out, w)
	}
	return out
}

// ruleOp sends a rule operation and returns its status, description and
// error condition.
func ruleOp(r *rpcClient, op string, body map[string]any) (int32, string, any) {
	r.t.Helper()
	resp := r.roundTrip(map[string]any{"operation": op}, body)
	code, _ := resp.ApplicationProperties["statusCode"].(int32)
	desc, _ := resp.ApplicationProperties["statusDescription"].(string)
	return code, desc, resp.ApplicationProperties["errorCondition"]
}

// The rule operations of a subscription's $management node, with the
// request shapes of the .NET and JavaScript rule managers: add-rule with a
// SQL filter and action or a correlation filter (null fields as .NET sends
// them), enumerate-rules with skip and top and the described types the
// SDKs decode, remove-rule down to no rule at all, after which the
// subscription gets nothing; and the errors of each.
func TestManagementRuleOperations(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.create(redTopic()...)
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	sess := env.amqpSession(ctx)
	all := newRPC(t, sess, "t/Subscriptions/all/$management")
	created := time.Now()

	rules := enumerateRulesOf(t, all, 0, 100)
	if len(rules) != 1 || rules[0].name != "$Default" || rules[0].filter != 0x1370000007 || len(rules[0].filterFields) != 0 ||
		rules[0].action != 0x13700000005 || rules[0].created.IsZero() {
		t.Fatalf("rules of a new subscription: %+v", rules)
	}

	add := func(name string, desc map[string]any) (int32, string, any) {
		return ruleOp(all, "com.microsoft:add-rule", map[string]any{"rule-name": name, "rule-description": desc})
	}
	if code, desc, _ := add("blue", map[string]any{
		"sql-filter":      map[string]any{"expression": "color = 'blue'"},
		"sql-rule-action": map[string]any{"expression": "SET seen = true"},
	}); code != 200 {
		t.Fatalf("add-rule blue: %d %s", code, desc)
	}
	if code, desc, _ := add("corr", map[string]any{
		"correlation-filter": map[string]any{"correlation-id": nil, "message-id": nil, "to": nil, "reply-to": nil,
			"label": "red", "session-id": nil, "reply-to-session-id": nil, "content-type": "text/plain",
			"properties": map[string]any{"n": int32(5)}},
		"sql-rule-action": nil, "rule-name": "corr",
	}); code != 200 {
		t.Fatalf("add-rule corr: %d %s", code, desc)
	}

	for _, c := range []struct {
		name string
		desc map[string]any
		code int32
		cond string
		text string
	}{
		{"BLUE", map[string]any{"sql-filter": map[string]any{"expression": "1=1"}}, 409, "com.microsoft:entity-already-exists", `The messaging entity 'sbemulatorns:Topic:t|all|BLUE' already exists.`},
		{"bad", map[string]any{"sql-filter": map[string]any{"expression": "color = 'x' AND"}}, 400, "amqp:invalid-field", "at position 16: expected a value"},
		{"bad", map[string]any{"sql-filter": map[string]any{"expression": "1=1"}, "sql-rule-action": map[string]any{"expression": "SET"}}, 400, "amqp:invalid-field", "at position 4"},
		{"both", map[string]any{"sql-filter": map[string]any{"expression": "1=1"}, "correlation-filter": map[string]any{"label": "x"}}, 400, "amqp:invalid-field", "both a sql-filter and a correlation-filter"},
		{"none", map[string]any{"sql-rule-action": map[string]any{"expression": "SET a = 1"}}, 400, "amqp:invalid-field", "neither a sql-filter nor a correlation-filter"},
		{"noexpr", map[string]any{"sql-filter": map[string]any{}}, 400, "amqp:invalid-field", "the sql-filter has no expression"},
		{"badcorr", map[string]any{"correlation-filter": map[string]any{"label": int32(1)}}, 400, "amqp:invalid-field", `"label" is a int32; want a string`},
	} {
		code, desc, cond := add(c.name, c.desc)
		if code != c.code || cond != c.cond || !strings.Contains(desc, c.text) || !strings.Contains(desc, "TrackingId:") {
			t.Errorf("add-rule %s %v: %d %v %q; want %d %s %q", c.name, c.desc, code, cond, desc, c.code, c.cond, c.text)
		}
	}
	for _, body := range []map[string]any{{}, {"rule-name": ""}, {"rule-name": "x"}, {"rule-name": "x", "rule-description": "sql"}} {
		if code, desc, _ := ruleOp(all, "com.microsoft:add-rule", body); code != 400 {
			t.Errorf("add-rule %v: %d %s; want 400", body, code, desc)
		}
	}

	rules = enumerateRulesOf(t, all, 1, 2)
	if len(rules) != 2 {
		t.Fatalf("page skip 1 top 2: %+v", rules)
	}
	blue, corr := rules[0], rules[1]
	if blue.name != "blue" || blue.filter != 0x1370000006 || !reflect.DeepEqual(blue.filterFields, []any{"color = 'blue'", int32(20)}) ||
		blue.action != 0x13700000006 || !reflect.DeepEqual(blue.actionFields, []any{"SET seen = true", int32(20)}) ||
		blue.created.Before(created.Add(-time.Second)) {
		t.Errorf("blue = %+v", blue)
	}
	if corr.name != "corr" || corr.filter != 0x1370000009 || len(corr.filterFields) != 9 || corr.action != 0x13700000005 {
		t.Fatalf("corr = %+v", corr)
	}
	for i, want := range []any{nil, nil, nil, nil, "red", nil, nil, "text/plain"} {
		if corr.filterFields[i] != want {
			t.Errorf("correlation field %d = %#v, want %#v", i, corr.filterFields[i], want)
		}
	}
	if props := reflect.ValueOf(corr.filterFields[8]); props.Kind() != reflect.Map || props.Len() != 1 {
		t.Errorf("correlation properties = %#v", corr.filterFields[8])
	}
	if got := enumerateRulesOf(t, all, 3, 10); got != nil {
		t.Errorf("page past the end: %+v, want 204", got)
	}
	if code, _, _ := ruleOp(all, "com.microsoft:enumerate-rules", map[string]any{"skip": int32(-1), "top": int32(1)}); code != 400 {
		t.Errorf("negative skip: %d, want 400", code)
	}

	// Which rules match: blue (with its action) and corr.
	send := func(m *broker.Message) {
		t.Helper()
		if err := env.eng.Send(context.Background(), "t", []*broker.Message{m}); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, _ := ruleOp(all, "com.microsoft:remove-rule", map[string]any{"rule-name": "$default"}); code != 200 {
		t.Fatalf("remove-rule $default: %d", code)
	}
	send(&broker.Message{MessageID: "green", ApplicationProperties: map[string]any{"color": "green"}})
	send(&broker.Message{MessageID: "blue", ApplicationProperties: map[string]any{"color": "blue"}})
	send(&broker.Message{MessageID: "corr", Subject: "red", ContentType: "text/plain", ApplicationProperties: map[string]any{"n": int64(5)}})
	if got := env.activeBodies("t/Subscriptions/all"); len(got) != 2 {
		t.Errorf("messages after the rule changes: %v, want the blue and corr messages", got)
	}

	// Remove down to no rule; an unknown name is not found.
	for _, name := range []string{"Blue", "corr"} {
		if code, desc, _ := ruleOp(all, "com.microsoft:remove-rule", map[string]any{"rule-name": name}); code != 200 {
			t.Fatalf("remove-rule %s: %d %s", name, code, desc)
		}
	}
	code, desc, cond := ruleOp(all, "com.microsoft:remove-rule", map[string]any{"rule-name": "corr"})
	if code != 404 || cond != "amqp:not-found" || !strings.Contains(desc, `The messaging entity 'sbemulatorns:Topic:t|all|corr' could not be found.`) {
		t.Errorf("removing an unknown rule: %d %v %q", code, cond, desc)
	}
	if got := enumerateRulesOf(t, all, 0, 10); got != nil {
		t.Errorf("rules after removing all: %+v, want 204", got)
	}
	before := env.counts("t/Subscriptions/all")
	send(&broker.Message{MessageID: "after", ApplicationProperties: map[string]any{"color": "blue"}})
	if c := env.counts("t/Subscriptions/all"); c != before {
		t.Errorf("a subscription without rules got a message: %+v, was %+v", c, before)
	}

	// Rules belong to subscriptions only.
	for _, node := range []string{"q/$management", "t/Subscriptions/red/$DeadLetterQueue/$management"} {
		r := newRPC(t, sess, node)
		for _, op := range []struct {
			name string
			body map[string]any
		}{
			{"com.microsoft:add-rule", map[string]any{"rule-name": "x", "rule-description": map[string]any{"sql-filter": map[string]any{"expression": "1=1"}}}},
			{"com.microsoft:remove-rule", map[string]any{"rule-name": "x"}},
			{"com.microsoft:enumerate-rules", map[string]any{"skip": int32(0), "top": int32(1)}},
		} {
			if code, desc, _ := ruleOp(r, op.name, op.body); code != 400 || !strings.Contains(desc, "rules") {
				t.Errorf("%s on %s: %d %q; want 400", op.name, node, code, desc)
			}
		}
	}
}

// A true-filter added as the SQL expression 1=1 is the TrueFilter, and
// 1=0 the FalseFilter, as Service Bus lists them.
func TestManagementRuleTrueAndFalseFilters(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.create(redTopic()...)
	ctx := testCtx(t, 30*time.Second)
	red := newRPC(t, env.amqpSession(ctx), "t/Subscriptions/red/$management")
	for _, r := range [][2]string{{"yes", "1 = 1"}, {"no", "1=0"}} {
		name, expr := r[0], r[1]
		if code, desc, _ := ruleOp(red, "com.microsoft:add-rule", map[string]any{"rule-name": name,
			"rule-description": map[string]any{"sql-filter": map[string]any{"expression": expr}}}); code != 200 {
			t.Fatalf("add-rule %s: %d %s", name, code, desc)
		}
	}
	got := map[string]uint64{}
	for _, r := range enumerateRulesOf(t, red, 0, 10) {
		got[r.name] = r.filter
	}
	if want := map[string]uint64{"red": 0x1370000009, "yes": 0x1370000007, "no": 0x1370000008}; !reflect.DeepEqual(got, want) {
		t.Fatalf("filters %#v, want %#v", got, want)
	}
	ent, err := env.eng.Entity(ctx, "t/Subscriptions/red")
	if err != nil || len(ent.Rules) != 3 || ent.Rules[1].SQL != "" || ent.Rules[2].SQL != "1=0" {
		t.Fatalf("engine rules %+v, %v", ent.Rules, err)
	}
}

// enumerate-rules lists a subscription's rules by name, as Service Bus
// does, whatever order they were added in.
func TestManagementEnumerateRulesByName(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.create(redTopic()...)
	ctx := testCtx(t, 30*time.Second)
	all := newRPC(t, env.amqpSession(ctx), "t/Subscriptions/all/$management")
	for _, name := range []string{"sqlRule", "zeta", "correlationRule", "Alpha"} {
		if code, desc, _ := ruleOp(all, "com.microsoft:add-rule", map[string]any{"rule-name": name,
			"rule-description": map[string]any{"sql-filter": map[string]any{"expression": "1=1"}}}); code != 200 {
			t.Fatalf("add-rule %s: %d %s", name, code, desc)
		}
	}
	var names []string
	for skip := int32(0); ; skip++ {
		page := enumerateRulesOf(t, all, skip, 1)
		if page == nil {
			break
		}
		names = append(names, page[0].name)
	}
	if want := []string{"$Default", "Alpha", "correlationRule", "sqlRule", "zeta"}; !reflect.DeepEqual(names, want) {
		t.Errorf("rules page by page: %q, want %q", names, want)
	}
}
