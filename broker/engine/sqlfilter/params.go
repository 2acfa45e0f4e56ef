package sqlfilter

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

// checkParams checks the parameter values of a SQL filter or action
// (what names which, "SQL filter" or "SQL action", for the error message):
// every key is a parameter name with its @ ("@p1": an @ followed by
// letters, digits and _), and every value is nil, a string, a bool, an
// integer, a float, a time.Time, a time.Duration, a uuid.UUID or a []byte.
// Otherwise it returns a *broker.Error with CodeInvalid that names the first
// bad key in key order.
func checkParams(what string, params map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if !isParamName(k) {
			return broker.Errorf(broker.CodeInvalid, "%s parameter %q: a parameter's name is @ followed by letters, digits and _, as in @p1", what, k)
		}
		switch v := params[k].(type) {
		case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64,
			float32, float64, time.Time, time.Duration, uuid.UUID, []byte:
		default:
			return broker.Errorf(broker.CodeInvalid, "%s parameter %q has the unsupported type %T", what, k, v)
		}
	}
	return nil
}

// isParamName reports whether k is "@" followed by one or more letters,
// digits and underscores, as the lexer reads a parameter.
func isParamName(k string) bool {
	if len(k) < 2 || k[0] != '@' {
		return false
	}
	for i := 1; i < len(k); i++ {
		if !isLetter(k[i]) && !isDigit(k[i]) {
			return false
		}
	}
	return true
}

// param returns the value of the parameter that t names: the entry of
// p.params whose key is t's text exactly or else, when exactly one is,
// regardless of case (as Service Bus matches property names). A parameter
// without a value is an error at its position: parameters are bound when
// the expression is parsed, never when it is evaluated.
func (p *parser) param(t token) (value, error) {
	if v, ok := p.params[t.text]; ok {
		return fromAny(v), nil
	}
	var found []string
	for k := range p.params {
		if strings.EqualFold(k, t.text) {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return null, p.errAt(t.pos, "the parameter %s has no value; give it one in the parameters", t.text)
	case 1:
		return fromAny(p.params[found[0]]), nil
	}
	slices.Sort(found)
	return null, p.errAt(t.pos, "the parameter %s is ambiguous: the parameters have %s", t.text, strings.Join(quoteAll(found), " and "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
