package admin

import (
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
)

// DefaultRuleName is the name of the rule a subscription created without
// rules gets (broker.DefaultRuleName).
const DefaultRuleName = broker.DefaultRuleName

// findRule returns the index of the rule called name, or -1.
func findRule(rules []broker.Rule, name string) int {
	for i, r := range rules {
		if strings.EqualFold(r.Name, name) {
			return i
		}
	}
	return -1
}

// ruleOf reads a RuleDescription (or DefaultRuleDescription). name is the
// rule's name from the URL, or "" to take it from the body ($Default when
// the body names none).
func ruleOf(in *atom.RuleDescription, name string) (broker.Rule, error) {
	bodyName := ""
	if in.Name != nil {
		bodyName = strings.TrimSpace(*in.Name)
	}
	switch {
	case name == "" && bodyName == "":
		name = DefaultRuleName
	case name == "":
		name = bodyName
	case bodyName != "" && !strings.EqualFold(bodyName, name):
		return broker.Rule{}, broker.Errorf(broker.CodeInvalid,
			"the rule is named %q in the body but %q in the URL", bodyName, name)
	}
	r := broker.Rule{Name: name}
	if in.Action != nil {
		switch t := in.Action.Type.Local(); t {
		case "", atom.EmptyRuleAction:
		case atom.SQLRuleAction:
			if in.Action.SQLExpression != nil {
				r.Action = strings.TrimSpace(*in.Action.SQLExpression)
			}
			if r.Action == "" {
				return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: the SqlRuleAction has no SqlExpression", name)
			}
			params, err := paramsOf(in.Action.Parameters, name, "SqlRuleAction")
			if err != nil {
				return broker.Rule{}, err
			}
			r.ActionParameters = params // the engine refuses a parameter without a value
		default:
			return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: unknown action type %q", name, t)
		}
	}
	f := in.Filter
	if f == nil {
		return r, nil // no filter: the TrueFilter
	}
	expr := ""
	if f.SQLExpression != nil {
		expr = strings.TrimSpace(*f.SQLExpression)
	}
	t := f.Type.Local()
	params, err := paramsOf(f.Parameters, name, t)
	if err != nil {
		return broker.Rule{}, err
	}
	if params != nil && (t == atom.TrueFilter || t == atom.FalseFilter || t == atom.CorrelationFilter) {
		return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: a %s has no Parameters; only a SqlFilter has", name, t)
	}
	switch {
	case t == atom.TrueFilter, t == atom.SQLFilter && expr == "1=1" && params == nil:
		return r, nil
	case t == atom.FalseFilter, t == atom.SQLFilter && expr == "1=0" && params == nil:
		r.SQL = "1=0"
		return r, nil
	case t == atom.SQLFilter:
		if expr == "" {
			return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: the SqlFilter has no SqlExpression", name)
		}
		// The engine parses it with its parameters and refuses it with
		// CodeInvalid if malformed or a parameter has no value.
		r.SQL, r.Parameters = expr, params
		return r, nil
	case t == atom.CorrelationFilter:
		c, err := correlationOf(f, name)
		if err != nil {
			return broker.Rule{}, err
		}
		r.Filter = c
		return r, nil
	case t == "":
		return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: the Filter has no i:type attribute", name)
	default:
		return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: unknown filter type %q", name, t)
	}
}

func correlationOf(f *atom.Filter, rule string) (*broker.CorrelationFilter, error) {
	c := &broker.CorrelationFilter{
		CorrelationID:    deref(f.CorrelationID),
		MessageID:        deref(f.MessageID),
		To:               deref(f.To),
		ReplyTo:          deref(f.ReplyTo),
		Subject:          deref(f.Label),
		SessionID:        deref(f.SessionID),
		ReplyToSessionID: deref(f.ReplyToSessionID),
		ContentType:      deref(f.ContentType),
	}
	if f.Properties == nil || len(f.Properties.Items) == 0 {
		return c, nil
	}
	c.Properties = make(map[string]any, len(f.Properties.Items))
	for _, kv := range f.Properties.Items {
		if kv.Key == "" {
			return nil, broker.Errorf(broker.CodeInvalid, "rule %q: a correlation filter property has no key", rule)
		}
		if _, dup := c.Properties[kv.Key]; dup {
			return nil, broker.Errorf(broker.CodeInvalid, "rule %q: the property %q appears twice", rule, kv.Key)
		}
		v, err := kv.Value.Decode()
		if err != nil {
			return nil, broker.Errorf(broker.CodeInvalid, "rule %q: property %q: %v", rule, kv.Key, err)
		}
		c.Properties[kv.Key] = v
	}
	return c, nil
}

// paramsOf reads the Parameters of a SqlFilter or SqlRuleAction (what) as
// the SDKs send them: KeyValueOfstringanyType elements, each a Key (the
// parameter's name with its @) and a Value with an XML Schema type, or
// i:nil="true" for NULL. It returns nil for no parameters.
func paramsOf(p *atom.KeyValues, rule, what string) (map[string]any, error) {
	if p == nil {
		return nil, nil
	}
	if len(p.Other) > 0 {
		return nil, broker.Errorf(broker.CodeInvalid, "rule %q: the %s Parameters hold a %s element; only KeyValueOfstringanyType is allowed",
			rule, what, p.Other[0].XMLName.Local)
	}
	if len(p.Items) == 0 {
		return nil, nil
	}
	params := make(map[string]any, len(p.Items))
	for _, kv := range p.Items {
		if kv.Key == "" {
			return nil, broker.Errorf(broker.CodeInvalid, "rule %q: a %s parameter has no Key", rule, what)
		}
		if _, dup := params[kv.Key]; dup {
			return nil, broker.Errorf(broker.CodeInvalid, "rule %q: the %s parameter %q appears twice", rule, what, kv.Key)
		}
		v, err := kv.Value.Decode()
		if err != nil {
			return nil, broker.Errorf(broker.CodeInvalid, "rule %q: %s parameter %q: %v", rule, what, kv.Key, err)
		}
		params[kv.Key] = v
	}
	return params, nil
}

// describeRule writes a rule as a RuleDescription.
func describeRule(r broker.Rule) *atom.RuleDescription {
	out := &atom.RuleDescription{
		Action:    &atom.Action{Type: atom.EmptyRuleAction},
		CreatedAt: &atom.Time{Time: r.CreatedAt},
		Name:      &r.Name,
	}
	if r.Action != "" {
		out.Action = &atom.Action{Type: atom.SQLRuleAction, SQLExpression: &r.Action, Parameters: atom.NewKeyValues(r.ActionParameters),
			CompatibilityLevel: atom.CompatibilityLevel}
	}
	sql := func(typ, expr string, params map[string]any) *atom.Filter {
		return &atom.Filter{Type: atom.InstanceType(typ), SQLExpression: &expr, CompatibilityLevel: atom.CompatibilityLevel, Parameters: atom.NewKeyValues(params)}
	}
	c := r.Filter
	switch {
	case c != nil:
		out.Filter = &atom.Filter{
			Type:             atom.CorrelationFilter,
			CorrelationID:    optional(c.CorrelationID),
			MessageID:        optional(c.MessageID),
			To:               optional(c.To),
			ReplyTo:          optional(c.ReplyTo),
			Label:            optional(c.Subject),
			SessionID:        optional(c.SessionID),
			ReplyToSessionID: optional(c.ReplyToSessionID),
			ContentType:      optional(c.ContentType),
			Properties:       atom.NewKeyValues(c.Properties),
		}
	case r.SQL == "1=0" && len(r.Parameters) == 0:
		out.Filter = sql(atom.FalseFilter, "1=0", nil)
	case r.SQL != "":
		out.Filter = sql(atom.SQLFilter, r.SQL, r.Parameters)
	default:
		out.Filter = sql(atom.TrueFilter, "1=1", nil)
	}
	return out
}
