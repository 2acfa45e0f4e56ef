package admin

import (
	"encoding/base64"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// DefaultRuleName is the name of the rule every new subscription has.
const DefaultRuleName = "$Default"

// effectiveRules returns a subscription's rules as Service Bus shows them:
// the engine stores no rule for a subscription that takes everything, which
// Service Bus shows as the $Default rule with a TrueFilter, created with the
// subscription.
func effectiveRules(sub broker.Entity) []broker.Rule {
	if len(sub.Rules) == 0 {
		return []broker.Rule{{Name: DefaultRuleName, CreatedAt: sub.CreatedAt}}
	}
	return sub.Rules
}

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
func ruleOf(in *ruleIn, name string) (broker.Rule, error) {
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
		switch t := typeAttr(in.Action.Attrs); t {
		case "", "EmptyRuleAction":
		case "SqlRuleAction":
			if hasParams(in.Action.Parameters) {
				return broker.Rule{}, errParams(name, "action")
			}
			if in.Action.SQLExpression != nil {
				r.Action = strings.TrimSpace(*in.Action.SQLExpression)
			}
			if r.Action == "" {
				return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: the SqlRuleAction has no SqlExpression", name)
			}
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
	if t := typeAttr(f.Attrs); (t == "SqlFilter" || t == "TrueFilter" || t == "FalseFilter") && hasParams(f.Parameters) {
		return broker.Rule{}, errParams(name, "filter")
	}
	switch t := typeAttr(f.Attrs); {
	case t == "TrueFilter", t == "SqlFilter" && expr == "1=1":
		return r, nil
	case t == "FalseFilter", t == "SqlFilter" && expr == "1=0":
		r.SQL = "1=0"
		return r, nil
	case t == "SqlFilter":
		if expr == "" {
			return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: the SqlFilter has no SqlExpression", name)
		}
		r.SQL = expr // the engine parses it and refuses it with CodeInvalid if malformed
		return r, nil
	case t == "CorrelationFilter":
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

func correlationOf(f *filterIn, rule string) (*broker.CorrelationFilter, error) {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	c := &broker.CorrelationFilter{
		CorrelationID:    str(f.CorrelationID),
		MessageID:        str(f.MessageID),
		To:               str(f.To),
		ReplyTo:          str(f.ReplyTo),
		Subject:          str(f.Label),
		SessionID:        str(f.SessionID),
		ReplyToSessionID: str(f.ReplyToSessionID),
		ContentType:      str(f.ContentType),
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
		v, err := propertyValue(typeAttr(kv.Value.Attrs), kv.Value.Text)
		if err != nil {
			return nil, broker.Errorf(broker.CodeInvalid, "rule %q: property %q: %v", rule, kv.Key, err)
		}
		c.Properties[kv.Key] = v
	}
	return c, nil
}

// propertyValue reads a value of an XML Schema type.
func propertyValue(typ, text string) (any, error) {
	bad := func(error) (any, error) {
		return nil, fmt.Errorf("%q is not a valid %s", clip(text), typ)
	}
	switch typ {
	case "string", "":
		return text, nil
	case "boolean":
		switch strings.TrimSpace(text) {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
		return bad(nil)
	case "int", "long", "short", "byte":
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return bad(err)
		}
		return n, nil
	case "double", "float", "decimal":
		x, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return bad(err)
		}
		return x, nil
	case "dateTime":
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(text))
		if err != nil {
			return bad(err)
		}
		return t.UTC(), nil
	case "duration":
		d, err := engine.ParseDuration(strings.TrimSpace(text))
		if err != nil {
			return bad(err)
		}
		return d, nil
	case "base64Binary":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
		if err != nil {
			return bad(err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("the type %q is not supported", typ)
}

// describeRule writes a rule as a RuleDescription.
func describeRule(r broker.Rule) *ruleXML {
	out := &ruleXML{
		XMLNSI:    nsInstance,
		Action:    actionXML{Type: "EmptyRuleAction"},
		CreatedAt: formatTime(r.CreatedAt),
		Name:      r.Name,
	}
	if r.Action != "" {
		out.Action = actionXML{Type: "SqlRuleAction", SQLExpression: r.Action, CompatibilityLevel: 20}
	}
	c := r.Filter
	switch {
	case c != nil:
	case r.SQL == "1=0":
		out.Filter = filterXML{Type: "FalseFilter", SQLExpression: "1=0", CompatibilityLevel: 20}
		return out
	case r.SQL != "":
		out.Filter = filterXML{Type: "SqlFilter", SQLExpression: r.SQL, CompatibilityLevel: 20}
		return out
	default:
		out.Filter = filterXML{Type: "TrueFilter", SQLExpression: "1=1", CompatibilityLevel: 20}
		return out
	}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	out.Filter = filterXML{
		Type:             "CorrelationFilter",
		CorrelationID:    opt(c.CorrelationID),
		MessageID:        opt(c.MessageID),
		To:               opt(c.To),
		ReplyTo:          opt(c.ReplyTo),
		Label:            opt(c.Subject),
		SessionID:        opt(c.SessionID),
		ReplyToSessionID: opt(c.ReplyToSessionID),
		ContentType:      opt(c.ContentType),
	}
	if len(c.Properties) > 0 {
		props := &propertiesXML{}
		for _, k := range slices.Sorted(maps.Keys(c.Properties)) {
			typ, text := xmlValue(c.Properties[k])
			props.Items = append(props.Items, keyValueXML{Key: k, Value: valueXML{Type: "d6p1:" + typ, Schema: nsSchema, Text: text}})
		}
		out.Filter.Properties = props
	}
	return out
}

// xmlValue writes a property value with its XML Schema type. Integers that
// fit are written as int, the type the Go SDK reads.
func xmlValue(v any) (typ, text string) {
	switch v := v.(type) {
	case string:
		return "string", v
	case bool:
		return "boolean", strconv.FormatBool(v)
	case int, int8, int16, int32, int64, uint8, uint16, uint32:
		n, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			return "int", strconv.FormatInt(n, 10)
		}
		return "long", strconv.FormatInt(n, 10)
	case uint, uint64:
		return "unsignedLong", fmt.Sprint(v)
	case float32:
		return "double", strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return "double", strconv.FormatFloat(v, 'g', -1, 64)
	case time.Time:
		return "dateTime", v.UTC().Format(time.RFC3339Nano)
	case time.Duration:
		return "duration", engine.FormatDuration(v)
	case []byte:
		return "base64Binary", base64.StdEncoding.EncodeToString(v)
	case uuid.UUID:
		return "string", v.String()
	}
	return "string", fmt.Sprint(v)
}

// clip shortens client text quoted in an error message.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// errParams refuses a SQL filter or action with Parameters.
func errParams(rule, what string) error {
	return broker.Errorf(broker.CodeNotSupported,
		"rule %q: SQL %s parameters (@name) are not supported; write the values into the expression", rule, what)
}
