package admin

import (
	"encoding/base64"
	"encoding/xml"
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
	t := typeAttr(f.Attrs)
	params, err := paramsOf(f.Parameters, name, t)
	if err != nil {
		return broker.Rule{}, err
	}
	if params != nil && (t == "TrueFilter" || t == "FalseFilter" || t == "CorrelationFilter") {
		return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: a %s has no Parameters; only a SqlFilter has", name, t)
	}
	switch {
	case t == "TrueFilter", t == "SqlFilter" && expr == "1=1" && params == nil:
		return r, nil
	case t == "FalseFilter", t == "SqlFilter" && expr == "1=0" && params == nil:
		r.SQL = "1=0"
		return r, nil
	case t == "SqlFilter":
		if expr == "" {
			return broker.Rule{}, broker.Errorf(broker.CodeInvalid, "rule %q: the SqlFilter has no SqlExpression", name)
		}
		// The engine parses it with its parameters and refuses it with
		// CodeInvalid if malformed or a parameter has no value.
		r.SQL, r.Parameters = expr, params
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
		if isNil(kv.Value.Attrs) {
			c.Properties[kv.Key] = nil
			continue
		}
		v, err := propertyValue(typeAttr(kv.Value.Attrs), kv.Value.Text)
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
func paramsOf(p *paramsIn, rule, what string) (map[string]any, error) {
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
		if isNil(kv.Value.Attrs) {
			params[kv.Key] = nil
			continue
		}
		v, err := propertyValue(typeAttr(kv.Value.Attrs), kv.Value.Text)
		if err != nil {
			return nil, broker.Errorf(broker.CodeInvalid, "rule %q: %s parameter %q: %v", rule, what, kv.Key, err)
		}
		params[kv.Key] = v
	}
	return params, nil
}

// isNil reports whether attrs hold i:nil="true", an XML Schema null.
func isNil(attrs []xml.Attr) bool {
	for _, a := range attrs {
		if a.Name.Local == "nil" && a.Name.Space != "xmlns" && strings.TrimSpace(a.Value) == "true" {
			return true
		}
	}
	return false
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
		out.Action = actionXML{Type: "SqlRuleAction", SQLExpression: r.Action, Parameters: keyValuesXML(r.ActionParameters), CompatibilityLevel: 20}
	}
	c := r.Filter
	switch {
	case c != nil:
	case r.SQL == "1=0" && len(r.Parameters) == 0:
		out.Filter = filterXML{Type: "FalseFilter", SQLExpression: "1=0", CompatibilityLevel: 20}
		return out
	case r.SQL != "":
		out.Filter = filterXML{Type: "SqlFilter", SQLExpression: r.SQL, CompatibilityLevel: 20, Parameters: keyValuesXML(r.Parameters)}
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
	out.Filter.Properties = keyValuesXML(c.Properties)
	return out
}

// keyValuesXML writes a correlation filter's Properties or a SQL filter's or
// action's Parameters as KeyValueOfstringanyType elements in key order; nil
// for none. A nil value is written with i:nil="true".
func keyValuesXML(m map[string]any) *propertiesXML {
	if len(m) == 0 {
		return nil
	}
	props := &propertiesXML{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] == nil {
			props.Items = append(props.Items, keyValueXML{Key: k, Value: valueXML{Nil: "true"}})
			continue
		}
		typ, text := xmlValue(m[k])
		props.Items = append(props.Items, keyValueXML{Key: k, Value: valueXML{Type: "d6p1:" + typ, Schema: nsSchema, Text: text}})
	}
	return props
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
