package amqpserver

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// Descriptors of the described lists that enumerate-rules answers with.
// The filters' codes are 0x00000013_7000000x, not 0x00000137_0000000x: that
// is what the SDKs decode (and what Microsoft's table spells with one zero
// fewer).
const (
	descRuleDescription uint64 = 0x0000013700000004
	descEmptyRuleAction uint64 = 0x0000013700000005
	descSQLRuleAction   uint64 = 0x0000013700000006
	descSQLFilter       uint64 = 0x0000001370000006
	descTrueFilter      uint64 = 0x0000001370000007
	descFalseFilter     uint64 = 0x0000001370000008
	descCorrelation     uint64 = 0x0000001370000009
)

// sqlCompatibilityLevel is the compatibility level Service Bus gives SQL
// filters and actions.
const sqlCompatibilityLevel int32 = 20

// Expressions that stand for the TrueFilter and the FalseFilter.
const (
	trueExpression  = "1=1"
	falseExpression = "1=0"
)

// correlationKeys are the keys of a correlation-filter map, in the order of
// the fields of com.microsoft:correlation-filter:list.
var correlationKeys = [...]string{"correlation-id", "message-id", "to", "reply-to", "label", "session-id", "reply-to-session-id", "content-type"}

// ruleName returns the required rule-name field.
func (r *mgmtRequest) ruleName() (string, error) {
	name, ok, err := r.str("rule-name")
	if err != nil {
		return "", err
	}
	if !ok || strings.TrimSpace(name) == "" {
		return "", broker.Errorf(broker.CodeInvalid, "the request has no \"rule-name\"")
	}
	return name, nil
}

// addRule adds a rule to the subscription: rule-name and rule-description
// {sql-filter {expression} | correlation-filter {...}, sql-rule-action
// {expression}?}. A name in use is 409 (entity-already-exists), a bad
// expression 400 with the position of the problem.
func addRule(r *mgmtRequest) (*response, error) {
	name, err := r.ruleName()
	if err != nil {
		return nil, err
	}
	v, ok := r.field("rule-description")
	desc, isMap := v.(wire.Map)
	if !isMap {
		return nil, missing("rule-description", "a map", v, ok)
	}
	rule, err := ruleOfDescription(name, desc)
	if err != nil {
		return nil, err
	}
	if err := r.l.eng.AddRule(r.ctx, r.entity, rule); err != nil {
		return nil, err
	}
	return okResponse(nil), nil
}

// removeRule removes the rule called rule-name; removing the last leaves
// the subscription without rules (it then gets nothing). An unknown name is
// 404.
func removeRule(r *mgmtRequest) (*response, error) {
	name, err := r.ruleName()
	if err != nil {
		return nil, err
	}
	if err := r.l.eng.RemoveRule(r.ctx, r.entity, name); err != nil {
		return nil, err
	}
	return okResponse(nil), nil
}

// enumerateRules answers a page of the subscription's rules (skip, top) as
// a list of {rule-description: com.microsoft:rule-description:list}; 204
// when the page is empty.
func enumerateRules(r *mgmtRequest) (*response, error) {
	skip, _, err := r.integer("skip")
	if err != nil {
		return nil, err
	}
	top, ok, err := r.integer("top")
	if err != nil {
		return nil, err
	}
	if skip < 0 || (ok && top < 0) {
		return nil, broker.Errorf(broker.CodeInvalid, "skip %d and top %d must not be negative", skip, top)
	}
	if !ok || top == 0 {
		top = maxMessagesPerResponse
	}
	if _, sub := broker.SplitAddress(r.entity); sub != broker.SubQueueMain {
		return nil, broker.Errorf(broker.CodeInvalid, "a %s has no rules", sub)
	}
	ent, err := r.c.eng.Entity(r.ctx, r.entity)
	if err != nil {
		return nil, err
	}
	if ent.Kind != broker.KindSubscription {
		return nil, broker.Errorf(broker.CodeInvalid, "%q is a %s; only subscriptions have rules", ent.Path, ent.Kind)
	}
	// The JavaScript SDK's live tests page through the rules in this order.
	byName := broker.RulesByName(ent.Rules)
	start := min(skip, int64(len(byName)))
	end := start + min(top, int64(len(byName))-start)
	if start == end {
		return noContent(), nil
	}
	rules := make([]any, 0, end-start)
	for _, rule := range byName[start:end] {
		rules = append(rules, map[string]any{"rule-description": describedRule(rule)})
	}
	return okResponse(map[string]any{"rules": rules}), nil
}

// ruleOfDescription reads a rule-description map.
func ruleOfDescription(name string, desc wire.Map) (broker.Rule, error) {
	rule := broker.Rule{Name: name}
	bad := func(format string, args ...any) error {
		return broker.Errorf(broker.CodeInvalid, "rule %q: "+format, append([]any{name}, args...)...)
	}
	sqlV, hasSQL := desc.Get("sql-filter")
	corrV, hasCorr := desc.Get("correlation-filter")
	hasSQL, hasCorr = hasSQL && sqlV != nil, hasCorr && corrV != nil
	switch {
	case hasSQL && hasCorr:
		return rule, bad("the rule-description has both a sql-filter and a correlation-filter")
	case hasSQL:
		expr, err := expressionOf(sqlV, "sql-filter")
		if err != nil {
			return rule, bad("%v", err)
		}
		switch strings.ReplaceAll(expr, " ", "") {
		case trueExpression: // the TrueFilter
		case falseExpression:
			rule.SQL = falseExpression
		default:
			rule.SQL = expr // the engine parses it and names the position of a problem
		}
	case hasCorr:
		f, err := correlationOfMap(corrV)
		if err != nil {
			return rule, bad("%v", err)
		}
		rule.Filter = f
	default:
		return rule, bad("the rule-description has neither a sql-filter nor a correlation-filter")
	}
	if v, ok := desc.Get("sql-rule-action"); ok && v != nil {
		expr, err := expressionOf(v, "sql-rule-action")
		if err != nil {
			return rule, bad("%v", err)
		}
		rule.Action = expr
	}
	return rule, nil
}

// expressionOf returns the expression of a sql-filter or sql-rule-action
// map.
func expressionOf(v any, what string) (string, error) {
	m, ok := v.(wire.Map)
	if !ok {
		return "", broker.Errorf(broker.CodeInvalid, "the %s is a %T; want a map", what, v)
	}
	e, _ := m.Get("expression")
	s, ok := stringOf(e)
	if !ok || strings.TrimSpace(s) == "" {
		return "", broker.Errorf(broker.CodeInvalid, "the %s has no expression", what)
	}
	return strings.TrimSpace(s), nil
}

// correlationOfMap reads a correlation-filter map: string fields (null or
// absent for none) and properties.
func correlationOfMap(v any) (*broker.CorrelationFilter, error) {
	m, ok := v.(wire.Map)
	if !ok {
		return nil, broker.Errorf(broker.CodeInvalid, "the correlation-filter is a %T; want a map", v)
	}
	f := &broker.CorrelationFilter{}
	fields := [...]*string{&f.CorrelationID, &f.MessageID, &f.To, &f.ReplyTo, &f.Subject, &f.SessionID, &f.ReplyToSessionID, &f.ContentType}
	for i, key := range correlationKeys {
		x, _ := m.Get(key)
		if x == nil {
			continue
		}
		s, ok := stringOf(x)
		if !ok {
			return nil, broker.Errorf(broker.CodeInvalid, "the correlation-filter's %q is a %T; want a string", key, x)
		}
		*fields[i] = s
	}
	switch p, _ := m.Get("properties"); p := p.(type) {
	case nil:
	case wire.Map:
		props, err := propertiesToModify(p)
		if err != nil {
			return nil, err
		}
		f.Properties = props
	default:
		return nil, broker.Errorf(broker.CodeInvalid, "the correlation-filter's properties are a %T; want a map", p)
	}
	return f, nil
}

// stringOf returns a string or symbol as a string.
func stringOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case wire.Symbol:
		return string(x), true
	}
	return "", false
}

// describedRule returns a rule as com.microsoft:rule-description:list:
// filter, action, name, created-at.
func describedRule(r broker.Rule) wire.Described {
	var filter wire.Described
	switch {
	case r.Filter != nil:
		f := r.Filter
		fields := make([]any, 0, len(correlationKeys)+1)
		for _, s := range [...]string{f.CorrelationID, f.MessageID, f.To, f.ReplyTo, f.Subject, f.SessionID, f.ReplyToSessionID, f.ContentType} {
			if s == "" {
				fields = append(fields, nil)
			} else {
				fields = append(fields, s)
			}
		}
		props := make(wire.Map, 0, len(f.Properties))
		for _, k := range slices.Sorted(maps.Keys(f.Properties)) { // the same rule encodes the same way
			props = append(props, wire.KeyValue{Key: k, Value: f.Properties[k]})
		}
		filter = wire.Described{Descriptor: descCorrelation, Value: append(fields, props)}
	case r.SQL == falseExpression && len(r.Parameters) == 0:
		filter = wire.Described{Descriptor: descFalseFilter, Value: []any{}}
	case r.SQL != "":
		filter = wire.Described{Descriptor: descSQLFilter, Value: []any{r.SQL, sqlCompatibilityLevel}}
	default:
		filter = wire.Described{Descriptor: descTrueFilter, Value: []any{}}
	}
	action := wire.Described{Descriptor: descEmptyRuleAction, Value: []any{}}
	if r.Action != "" {
		action = wire.Described{Descriptor: descSQLRuleAction, Value: []any{r.Action, sqlCompatibilityLevel}}
	}
	var created any
	if !r.CreatedAt.IsZero() {
		created = r.CreatedAt.UTC().Truncate(time.Millisecond)
	}
	return wire.Described{Descriptor: descRuleDescription, Value: []any{filter, action, r.Name, created}}
}
