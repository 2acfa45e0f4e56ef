package sqlfilter

import (
	"maps"
	"strings"

	"github.com/peeklock/peeklock/broker"
)

// Action is a parsed SQL rule action: SET and REMOVE statements applied in
// order. It is safe for concurrent use.
type Action struct {
	src   string
	stmts []stmt
}

// stmt is SET target = x, or REMOVE target when x is nil.
type stmt struct {
	target expr // userRef or sysRef
	x      expr
}

// ParseAction parses a SQL rule action: one or more statements
// "SET property = expression" or "REMOVE property", separated by commas,
// semicolons or only white space as Service Bus accepts them ("SET a = 1
// SET b = 2"); a trailing semicolon is allowed, a trailing comma is not. An action may set or remove
// application properties and the string system properties MessageId,
// CorrelationId, To, ReplyTo, ReplyToSessionId, SessionId, Label (Subject),
// ContentType, PartitionKey and ViaPartitionKey; other system properties are
// read-only. A malformed action gives a *broker.Error with CodeInvalid whose
// message names the 1-based character position of the problem. An @name in
// the action is an error; see ParseActionWith.
func ParseAction(src string) (*Action, error) { return ParseActionWith(src, nil) }

// ParseActionWith parses a SQL rule action as ParseAction does, with the
// values of its parameters (@name) taken from params as ParseFilterWith
// takes them: bound now, a missing one a CodeInvalid error with its
// position.
func ParseActionWith(src string, params map[string]any) (*Action, error) {
	p, err := newParser("SQL action", src, params)
	if err != nil {
		return nil, err
	}
	a := &Action{src: src}
	for {
		kw := strings.ToUpper(p.tok.text)
		var set bool
		switch {
		case p.isKw("set"):
			set = true
		case p.isKw("remove"):
		default:
			return nil, p.unexpected("SET or REMOVE")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		targetPos := p.tok.pos
		target, err := p.parseProperty()
		if err != nil {
			return nil, err
		}
		if s, ok := target.(sysRef); ok && s.p.str(&broker.Message{}) == nil {
			return nil, p.errAt(targetPos, "%s: the system property is read-only", kw)
		}
		st := stmt{target: target}
		if set {
			if err := p.expectOp("="); err != nil {
				return nil, err
			}
			it, err := p.parseAdd()
			if err != nil {
				return nil, err
			}
			if st.x, err = p.asExpr(it); err != nil {
				return nil, err
			}
		}
		a.stmts = append(a.stmts, st)
		sep, comma := false, false
		for p.isOp(",") || p.isOp(";") {
			sep, comma = true, p.isOp(",")
			if err := p.advance(); err != nil {
				return nil, err
			}
		}
		if p.tok.kind == tEOF && !comma {
			return a, nil
		}
		if !sep && !p.isKw("set") && !p.isKw("remove") {
			return nil, p.unexpected("a comma, a semicolon or the end of the action")
		}
	}
}

// Apply applies the action to m, in place: each statement sees the changes
// of the ones before it. m.ApplicationProperties is replaced by a copy
// before it changes, so a map m shares with another message is never
// written to. Setting a string system property to a value that is not a
// string stores its text, and to NULL clears it; setting an application
// property to NULL keeps the property with a nil value.
func (a *Action) Apply(m *broker.Message) {
	copied := false
	for _, st := range a.stmts {
		switch t := st.target.(type) {
		case sysRef:
			s := t.p.str(m)
			if st.x == nil {
				*s = ""
			} else {
				*s = st.x.eval(m).text()
			}
		case userRef:
			var v any
			if st.x != nil {
				v = st.x.eval(m).toAny()
			}
			if !copied {
				props := make(map[string]any, len(m.ApplicationProperties)+1)
				maps.Copy(props, m.ApplicationProperties)
				m.ApplicationProperties, copied = props, true
			}
			key := userKey(m.ApplicationProperties, t.name)
			if st.x == nil {
				delete(m.ApplicationProperties, key)
			} else {
				m.ApplicationProperties[key] = v
			}
		}
	}
}

// String returns the action as it was parsed.
func (a *Action) String() string { return a.src }
