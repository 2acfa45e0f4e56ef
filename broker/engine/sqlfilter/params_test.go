package sqlfilter

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

func TestFilterParameters(t *testing.T) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	id := uuid.MustParse("7c9e6679-7425-40de-944b-e07fc1f90ae7")
	params := map[string]any{
		"@color": "red", "@Five": int64(5), "@four32": int32(4), "@small": uint8(3), "@price": 12.5, "@yes": true,
		"@when": when, "@minute": time.Minute, "@none": nil, "@id": id, "@raw": []byte("x"),
		"@pat": "r%", "@bang": "!", "@p1": 1, "@big": uint64(1 << 63), "@f32": float32(0.5),
		"@q": 5, "@Q": 6, "@qQ": 5,
	}
	cases := []struct {
		expr string
		want result
	}{
		{"color = @color", isTrue},
		{"@color = color", isTrue},
		{"color = @COLOR", isTrue}, // a parameter regardless of case
		{"quantity = @five", isTrue},
		{"quantity > @four32 AND quantity > @small", isTrue},
		{"quantity = @five + @p1 - 1", isTrue},
		{"-quantity = -@Five", isTrue},
		{"price = @price", isTrue},
		{"price - @f32 = 12", isTrue},
		{"ok = @yes", isTrue},
		{"when = @when", isTrue},
		{"sys.TimeToLive = @minute", isTrue},
		{"color = @none", isUnknown},
		{"@none IS NULL", isTrue},
		{"big = @big", isTrue},
		{"color IN ('blue', @color)", isTrue},
		{"color NOT IN (@color)", isFalse},
		{"color LIKE @pat", isTrue},
		{"path LIKE 'a!%b%' ESCAPE @bang", isTrue},
		{"color = @raw", isFalse},
		{"@id = @id", isTrue},
		{"@five = @five", isTrue},
		{"quantity = @q", isTrue},  // the exact key first: @Q is 6
		{"quantity = @Qq", isTrue}, // one key regardless of case
	}
	m := testMessage()
	for _, c := range cases {
		f, err := ParseFilterWith(c.expr, params)
		if err != nil {
			t.Errorf("ParseFilterWith(%q): %v", c.expr, err)
			continue
		}
		if got := resultOf(f, m); got != c.want {
			t.Errorf("%q = %v, want %v", c.expr, got, c.want)
		}
		if f.String() != c.expr {
			t.Errorf("String() = %q, want %q", f.String(), c.expr)
		}
	}
}

// TestParameterBoundAtParse: a filter keeps the values it was parsed with,
// whatever happens to the map later.
func TestParameterBoundAtParse(t *testing.T) {
	params := map[string]any{"@c": "red"}
	f, err := ParseFilterWith("color = @c", params)
	if err != nil {
		t.Fatal(err)
	}
	params["@c"] = "blue"
	if !f.Match(testMessage()) {
		t.Fatal("the filter took the changed value")
	}
}

func TestParameterErrors(t *testing.T) {
	cases := []struct {
		expr   string
		params map[string]any
		want   string
	}{
		{"a = @p", nil, `SQL filter "a = @p": at position 5: the parameter @p has no value; give it one in the parameters`},
		{"a = 1 OR b = @q1", map[string]any{"@p": 1}, `SQL filter "a = 1 OR b = @q1": at position 14: the parameter @q1 has no value; give it one in the parameters`},
		{"a = @p", map[string]any{"p": 1}, `SQL filter parameter "p": a parameter's name is @ followed by letters, digits and _, as in @p1`},
		{"a = @p", map[string]any{"@p": 1, "@": 1}, `SQL filter parameter "@": a parameter's name is @ followed by letters, digits and _, as in @p1`},
		{"a = @p", map[string]any{"@p": 1, "@a-b": 1}, `SQL filter parameter "@a-b": a parameter's name is @ followed by letters, digits and _, as in @p1`},
		{"a = @p", map[string]any{"@p": 1i}, `SQL filter parameter "@p" has the unsupported type complex128`},
		{"a = @p", map[string]any{"@p": struct{}{}}, `SQL filter parameter "@p" has the unsupported type struct {}`},
		{"a = @p", map[string]any{"@P": 1, "@pp": 2, "@p ": 3}, `SQL filter parameter "@p ": a parameter's name is @ followed by letters, digits and _, as in @p1`},
		{"a = @xy", map[string]any{"@XY": 1, "@Xy": 2}, `SQL filter "a = @xy": at position 5: the parameter @xy is ambiguous: the parameters have "@XY" and "@Xy"`},
		{"a LIKE @n", map[string]any{"@n": 1}, `SQL filter "a LIKE @n": at position 8: expected a pattern (a string in single quotes or a string parameter) after LIKE, found the parameter @n`},
		{"a LIKE @missing", map[string]any{}, `SQL filter "a LIKE @missing": at position 8: the parameter @missing has no value; give it one in the parameters`},
		{"a LIKE 'x' ESCAPE @e", map[string]any{"@e": "ab"}, `SQL filter "a LIKE 'x' ESCAPE @e": at position 19: expected one character in single quotes (or a parameter of one) after ESCAPE, found the parameter @e`},
		{"a LIKE @x ESCAPE @e", map[string]any{"@x": "a!", "@e": "!"}, `SQL filter "a LIKE @x ESCAPE @e": at position 8: the LIKE pattern ends with its escape character`},
		{"EXISTS(@p)", map[string]any{"@p": "a"}, `SQL filter "EXISTS(@p)": at position 8: expected a property name, found the parameter @p`},
		{"@p", map[string]any{"@p": true}, `SQL filter "@p": at position 1: expected a condition (a comparison, IS NULL, IN, LIKE or EXISTS), found a value`},
	}
	for _, c := range cases {
		_, err := ParseFilterWith(c.expr, c.params)
		var be *broker.Error
		if !errors.As(err, &be) || be.Code != broker.CodeInvalid {
			t.Errorf("ParseFilterWith(%q, %v) = %v, want a CodeInvalid error", c.expr, c.params, err)
			continue
		}
		if be.Message != c.want {
			t.Errorf("ParseFilterWith(%q, %v):\n got %s\nwant %s", c.expr, c.params, be.Message, c.want)
		}
	}
}

func TestActionParameters(t *testing.T) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, err := ParseActionWith("SET priority = @prio; SET n = quantity * @factor, SET sys.To = @to, SET at = @when, SET sys.Label = @n, REMOVE color",
		map[string]any{"@prio": "high", "@factor": int32(3), "@to": "shipping-eu", "@when": when, "@n": 7, "@unused": 1.5})
	if err != nil {
		t.Fatal(err)
	}
	m := testMessage()
	m.ApplicationProperties = map[string]any{"color": "red", "quantity": int32(5)}
	a.Apply(m)
	want := map[string]any{"quantity": int32(5), "priority": "high", "n": int64(15), "at": when}
	if len(m.ApplicationProperties) != len(want) {
		t.Fatalf("properties %v, want %v", m.ApplicationProperties, want)
	}
	for k, v := range want {
		if m.ApplicationProperties[k] != v {
			t.Fatalf("properties %v, want %v", m.ApplicationProperties, want)
		}
	}
	if m.To != "shipping-eu" || m.Subject != "7" {
		t.Fatalf("To %q, Subject %q", m.To, m.Subject)
	}

	_, err = ParseActionWith("SET a = 1; SET b = @b", map[string]any{"@a": 1})
	if want := `SQL action "SET a = 1; SET b = @b": at position 20: the parameter @b has no value; give it one in the parameters`; err == nil || err.Error() != "invalid request: "+want {
		t.Fatalf("missing parameter: %v, want %s", err, want)
	}
	_, err = ParseActionWith("SET @a = 1", map[string]any{"@a": 1})
	if want := `SQL action "SET @a = 1": at position 5: expected a property name, found the parameter @a`; err == nil || err.Error() != "invalid request: "+want {
		t.Fatalf("parameter as a target: %v, want %s", err, want)
	}
	_, err = ParseActionWith("SET a = @a", map[string]any{"a": 1})
	if want := `SQL action parameter "a": a parameter's name is @ followed by letters, digits and _, as in @p1`; err == nil || err.Error() != "invalid request: "+want {
		t.Fatalf("bad key: %v, want %s", err, want)
	}
}
