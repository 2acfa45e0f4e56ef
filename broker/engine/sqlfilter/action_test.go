package sqlfilter

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

func TestActionApply(t *testing.T) {
	cases := []struct {
		action string
		props  map[string]any
		check  func(m *broker.Message) string
	}{
		{"SET priority = 'high'", map[string]any{"color": "red", "quantity": int32(5), "priority": "high"}, nil},
		{"SET quantity = quantity * 2", map[string]any{"color": "red", "quantity": int64(10)}, nil},
		{"SET QUANTITY = 1", map[string]any{"color": "red", "quantity": int64(1)}, nil}, // the existing key regardless of case
		{"REMOVE color", map[string]any{"quantity": int32(5)}, nil},
		{"REMOVE user.[COLOR]", map[string]any{"quantity": int32(5)}, nil},
		{"REMOVE missing", map[string]any{"color": "red", "quantity": int32(5)}, nil},
		{"SET a = 1, SET b = a + 1; SET c = 'x' + color;", map[string]any{"color": "red", "quantity": int32(5), "a": int64(1), "b": int64(2), "c": "xred"}, nil},
		{"SET a = 1; REMOVE a", map[string]any{"color": "red", "quantity": int32(5)}, nil},
		// White space alone separates statements, as the official SDK's live tests send them.
		{"SET a = 1 SET b = a + 1 REMOVE color", map[string]any{"quantity": int32(5), "a": int64(1), "b": int64(2)}, nil},
		{"SET n = NULL, SET f = 1.5, SET t = TRUE", map[string]any{"color": "red", "quantity": int32(5), "n": nil, "f": 1.5, "t": true}, nil},
		{"SET sys.Label = 'relabelled', SET sys.To = quantity, SET sys.CorrelationId = NULL", map[string]any{"color": "red", "quantity": int32(5)},
			func(m *broker.Message) string {
				if m.Subject != "relabelled" || m.To != "5" || m.CorrelationID != "" {
					return m.Subject + "|" + m.To + "|" + m.CorrelationID
				}
				return ""
			}},
		{"REMOVE sys.ContentType", map[string]any{"color": "red", "quantity": int32(5)},
			func(m *broker.Message) string {
				if m.ContentType != "" {
					return m.ContentType
				}
				return ""
			}},
	}
	for _, c := range cases {
		a, err := ParseAction(c.action)
		if err != nil {
			t.Errorf("ParseAction(%q): %v", c.action, err)
			continue
		}
		orig := map[string]any{"color": "red", "quantity": int32(5)}
		m := &broker.Message{ApplicationProperties: orig, Subject: "s", To: "t", CorrelationID: "c", ContentType: "ct"}
		a.Apply(m)
		if !reflect.DeepEqual(m.ApplicationProperties, c.props) {
			t.Errorf("%q: properties %v, want %v", c.action, m.ApplicationProperties, c.props)
		}
		if len(orig) != 2 || orig["color"] != "red" || orig["quantity"] != int32(5) {
			t.Errorf("%q changed the original map: %v", c.action, orig)
		}
		if c.check != nil {
			if bad := c.check(m); bad != "" {
				t.Errorf("%q: %s", c.action, bad)
			}
		}
	}
}

func TestActionNewID(t *testing.T) {
	a, err := ParseAction("SET id = newid()")
	if err != nil {
		t.Fatal(err)
	}
	m := &broker.Message{}
	a.Apply(m)
	if id, ok := m.ApplicationProperties["id"].(uuid.UUID); !ok || id == (uuid.UUID{}) {
		t.Fatalf("id = %#v", m.ApplicationProperties["id"])
	}
}

func TestActionErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"", `SQL action "": at position 1: the expression is empty`},
		{"a = 1", `SQL action "a = 1": at position 1: expected SET or REMOVE, found "a"`},
		{"SET a", `SQL action "SET a": at position 6: expected "=", found the end of the expression`},
		{"SET a = ", `SQL action "SET a = ": at position 9: expected a value, found the end of the expression`},
		{"SET a = 1 = 2", `SQL action "SET a = 1 = 2": at position 11: expected a comma, a semicolon or the end of the action, found "="`},
		{"SET a = 1 b = 2", `SQL action "SET a = 1 b = 2": at position 11: expected a comma, a semicolon or the end of the action, found "b"`},
		{"SET a = (1 = 1)", `SQL action "SET a = (1 = 1)": at position 9: expected a value, found a condition`},
		{"SET sys.SequenceNumber = 1", `SQL action "SET sys.SequenceNumber = 1": at position 5: SET: the system property is read-only`},
		{"remove sys.EnqueuedTimeUtc", `SQL action "remove sys.EnqueuedTimeUtc": at position 8: REMOVE: the system property is read-only`},
		{"SET sys.Bogus = 1", `SQL action "SET sys.Bogus = 1": at position 9: sys.Bogus is not a system property`},
		{"SET and = 1", `SQL action "SET and = 1": at position 5: unexpected keyword AND; write [and] for a property of that name`},
		{"REMOVE", `SQL action "REMOVE": at position 7: expected a property name, found the end of the expression`},
		{"SET a = 1,", `SQL action "SET a = 1,": at position 11: expected SET or REMOVE, found the end of the expression`},
	}
	for _, c := range cases {
		_, err := ParseAction(c.expr)
		var be *broker.Error
		if !errors.As(err, &be) || be.Code != broker.CodeInvalid {
			t.Errorf("ParseAction(%q) = %v, want a CodeInvalid error", c.expr, err)
			continue
		}
		if be.Message != c.want {
			t.Errorf("ParseAction(%q):\n got %s\nwant %s", c.expr, be.Message, c.want)
		}
	}
}
