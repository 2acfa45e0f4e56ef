package engine

import (
	"maps"
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/sqlfilter"
)

// RuleNameProperty is the application property that names the rule whose
// action made a copy of a message, as Service Bus's topic filter
// documentation describes.
const RuleNameProperty = "RuleName"

// ruleSet is a subscription's rules compiled once, when they are set, so
// that fan-out never parses an expression. A ruleSet without rules (or a
// nil *ruleSet) takes no message.
type ruleSet struct {
	rules []compiledRule
}

// compiledRule is one rule: a correlation filter, a SQL filter, or neither
// (the TrueFilter), and an optional SQL action.
type compiledRule struct {
	name   string
	corr   *broker.CorrelationFilter
	sql    *sqlfilter.Filter
	action *sqlfilter.Action
}

// compileRules validates and compiles a subscription's rules: each named,
// names unique regardless of case, at most one kind of filter, expressions
// that parse with their parameters (bound here, so that a parameter without
// a value refuses the rule now), parameters only with an expression. Errors
// are CodeInvalid and name the rule.
func compileRules(path string, rules []broker.Rule) (*ruleSet, error) {
	rs := &ruleSet{rules: make([]compiledRule, len(rules))}
	for i, r := range rules {
		if r.Name == "" {
			return nil, newErr(broker.CodeInvalid, path, "rule %d has no name", i)
		}
		for j := range i {
			if strings.EqualFold(rules[j].Name, r.Name) {
				return nil, newErr(broker.CodeInvalid, path, "two rules are named %q", r.Name)
			}
		}
		c := compiledRule{name: r.Name, corr: r.Filter}
		if r.SQL == "" && len(r.Parameters) > 0 {
			return nil, newErr(broker.CodeInvalid, path, "rule %q has filter parameters but no SQL filter", r.Name)
		}
		if r.Action == "" && len(r.ActionParameters) > 0 {
			return nil, newErr(broker.CodeInvalid, path, "rule %q has action parameters but no SQL action", r.Name)
		}
		if r.SQL != "" {
			if r.Filter != nil {
				return nil, newErr(broker.CodeInvalid, path, "rule %q has both a correlation filter and a SQL filter", r.Name)
			}
			f, err := sqlfilter.ParseFilterWith(r.SQL, r.Parameters)
			if err != nil {
				return nil, ruleErr(path, r.Name, err)
			}
			c.sql = f
		}
		if r.Action != "" {
			a, err := sqlfilter.ParseActionWith(r.Action, r.ActionParameters)
			if err != nil {
				return nil, ruleErr(path, r.Name, err)
			}
			c.action = a
		}
		rs.rules[i] = c
	}
	return rs, nil
}

// ruleErr prefixes a parse error with the rule's name and gives it the
// entity and a tracking id.
func ruleErr(path, rule string, err error) error {
	msg := err.Error()
	if be, ok := err.(*broker.Error); ok {
		msg = be.Message
	}
	return newErr(broker.CodeInvalid, path, "rule %q: %s", rule, msg)
}

// match reports whether the rule's filter selects m.
func (r *compiledRule) match(m *broker.Message) bool {
	switch {
	case r.sql != nil:
		return r.sql.Match(m)
	case r.corr != nil:
		return correlationMatch(r.corr, m)
	}
	return true
}

// deliveries appends to dst the copies of m that a subscription with these
// rules takes, as Service Bus's topic filter documentation describes: all
// matching rules without an action together give one copy, m itself; each
// matching rule with an action gives one more copy of its own, a new
// message with the action applied and the application property RuleName
// set to the rule's name. So a message that matches three rules without
// actions and two with actions gives three copies. The copy without an
// action comes first, then the action copies in rule order. m is never
// changed.
func (rs *ruleSet) deliveries(dst []*broker.Message, m *broker.Message) []*broker.Message {
	if rs == nil {
		return dst
	}
	plain := false
	for i := range rs.rules {
		if r := &rs.rules[i]; r.action == nil && r.match(m) {
			plain = true
			break
		}
	}
	if plain {
		dst = append(dst, m)
	}
	for i := range rs.rules {
		r := &rs.rules[i]
		if r.action == nil || !r.match(m) {
			continue
		}
		c := *m
		props := make(map[string]any, len(m.ApplicationProperties)+1)
		maps.Copy(props, m.ApplicationProperties)
		props[RuleNameProperty] = r.name
		c.ApplicationProperties = props
		r.action.Apply(&c)
		c.Size = broker.MessageSize(&c)
		dst = append(dst, &c)
	}
	return dst
}

// mustCompile compiles rules that were checked before (or read from the
// store, which holds only checked rules). Should one fail all the same, the
// subscription takes no message rather than every message.
func mustCompile(path string, rules []broker.Rule) *ruleSet {
	rs, err := compileRules(path, rules)
	if err != nil {
		return &ruleSet{}
	}
	return rs
}
